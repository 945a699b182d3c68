#!/bin/sh
# Renders the hicolor PNG icons from reconstudio.svg (needs rsvg-convert:
# apt-get install librsvg2-bin). The PNGs are kept in the repository so that a
# build needs no SVG renderer; run this after editing the SVG.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for size in 16 22 24 32 48 64 128 256 512; do
    rsvg-convert --width "$size" --height "$size" --output "$here/icons/reconstudio-$size.png" \
        "$here/reconstudio.svg"
done
