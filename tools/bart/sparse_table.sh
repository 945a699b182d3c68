#!/usr/bin/env bash
# The sparse-prior table (tools/bart/README.md, issue 13): sparse.sh on each case below, one Markdown
# table. Undersampled 2D golden-angle radial (128^2, 256^2) and 3D kooshball (32^3, 40^3) cases, each
# noiseless and with `bart noise`, about 3x (2D) and 4x (3D) below Nyquist.
# usage: sparse_table.sh [--cli PATH] [--only 2d|3d] [--work DIR]   (RECONSTUDIO_CLI works too)
# --work keeps each case's data and sweep log (sweep.log: every run of the sweeps) in DIR/case-K.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli_args=() only="" work=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --cli) cli_args=(--cli "$2"); shift 2 ;;
        --only) only=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        *) echo "sparse_table.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
# The grids: sparse.sh's half-decade defaults, moved where a first run found the peaks elsewhere (the
# noisier 256^2 and 3D data want larger thresholds; BART's 3D ones smaller). The climb after the coarse
# grid goes past either edge, so a grid only has to bracket the peak to save runs.
# The 2D grids: three or four half-decade values around the peaks of the last refined sweep
# (docs/SPARSE.md), so that the climbs start next to them. BART's 256^2 runs: 300 iterations (its TV
# moved by 0.003 dB from 300 to 1000 on 128^2 with noise; a 256^2 run takes about 40 CPU s at 1000).
cases2d=(
    "--dims 2 --n 128 --spokes 64 --lambdas 0.01_0.03_0.1 --pics-lambdas 0.0003_0.001_0.003"
    "--dims 2 --n 128 --spokes 64 --noise 1e-6 --lambdas 0.1_0.3_1 --pics-lambdas 0.001_0.003_0.01_0.03"
    "--dims 2 --n 256 --spokes 128 --noise 1e-6 --pics-iterations 300 --lambdas 0.3_1_3 --pics-lambdas 0.003_0.01_0.03_0.1"
    "--dims 2 --n 256 --spokes 128 --pics-iterations 300 --lambdas 0.03_0.1_0.3 --pics-lambdas 0.0003_0.001_0.003"
)
# BART's 3D runs are the slow ones (two cores; 40^3 with -R T at 1000 iterations: about 100 CPU s a
# run): only ours' TV (isotropic and anisotropic) and BART's wavelets, its best method on every 3D case of
# the full sweep (docs/SPARSE.md: T 0.2-0.7 dB and l2 2 dB below it). 300 iterations with noise, where its
# results show they suffice; noiseless, BART's wavelets were still rising at 300 on 32^3 (20.89 -> 21.24 dB
# at 1000), so 1000. Grids narrowed around the last refined sweep's peaks as in 2D (40^3 noiseless, the first
# run: around the 32^3 noiseless peaks).
methods3d="--methods tv_tva_W"
cases3d=(
    "--dims 3 --n 40 --spokes 625 --pics-iterations 1000 --lambdas 0.01_0.03_0.1 --pics-lambdas 0.00001_0.00003_0.0001 $methods3d"
    "--dims 3 --n 32 --spokes 400 --noise 1e-6 --pics-iterations 300 --lambdas 0.1_0.3_1 --pics-lambdas 0.0001_0.0003_0.001 $methods3d"
    "--dims 3 --n 40 --spokes 625 --noise 1e-6 --pics-iterations 300 --lambdas 0.1_0.3_1 --pics-lambdas 0.0001_0.0003_0.001 $methods3d"
    "--dims 3 --n 32 --spokes 400 --pics-iterations 1000 --lambdas 0.01_0.03_0.1 --pics-lambdas 0.00001_0.00003_0.0001 $methods3d"
)
cases=()
[[ $only == 3d ]] || cases+=("${cases2d[@]}")
[[ $only == 2d ]] || cases+=("${cases3d[@]}")
header=1 k=0
for c in "${cases[@]}"; do
    k=$((k + 1)) work_args=()
    [[ -z $work ]] || work_args=(--work "$work/case-$k")
    args=()
    for w in $c; do args+=("${w//_/ }"); done  # a grid's (or --methods') values are joined by _ in the lists above
    "$here/sparse.sh" "${cli_args[@]}" "${work_args[@]}" --header "$header" "${args[@]}"
    header=0
done
