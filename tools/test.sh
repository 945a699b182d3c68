#!/usr/bin/env bash
# Sets up, builds and runs every test (CPU, formats, GUI under offscreen/Xvfb, packaging).
# GPU tests skip with a message where no GPU exists.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup-debian.sh
./tools/build.sh
cd build
ctest --output-on-failure -j2 --timeout 900
