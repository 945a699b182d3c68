#!/usr/bin/env bash
# Sets up, builds and starts the workstation on the built-in demo case.
# Without a display it says how to run headless and runs the command-line comparison instead.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup-debian.sh
./tools/build.sh
if [ -x build/app/gui/reconstudio ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec build/app/gui/reconstudio --demo default
fi
cat <<'MSG'
No display found. To use the workstation headless:
  xvfb-run -a build/app/gui/reconstudio --demo default --screenshot workstation.png
    (renders the window on a virtual display after the solve, saves a PNG and exits), or
  build/app/cli/reconstudio-cli compare          (the same comparison on the terminal)
Running the terminal comparison now:
MSG
exec build/app/cli/reconstudio-cli compare
