#!/usr/bin/env bash
# The README's comparison table: compare.sh on each case below, one Markdown table.
# usage: table.sh [--cli PATH]   (RECONSTUDIO_CLI works too)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli_args=()
if [[ ${1:-} == --cli ]]; then cli_args=(--cli "$2"); fi
cases=(
    "--dims 2 --n 128 --spokes 201"
    "--dims 2 --n 128 --spokes 201 --noise 1e-6"
    "--dims 2 --n 128 --spokes 64"
    "--dims 3 --n 32 --spokes 1600"
    "--dims 3 --n 32 --spokes 1600 --noise 1e-6"
)
header=1
for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    COMPARE_HEADER=$header "$here/compare.sh" "${cli_args[@]}" $c
    header=0
done
