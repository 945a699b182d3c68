#!/usr/bin/env bash
# Sets up, builds and runs every test (CPU, formats, GUI under offscreen/Xvfb, packaging).
# GPU tests skip with a message where no GPU exists.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup-debian.sh
./tools/build.sh
cd build
# Tests run two at a time on small machines: idle OpenMP threads should sleep, not spin.
export OMP_WAIT_POLICY=passive
ctest --output-on-failure -j2 --timeout 900
