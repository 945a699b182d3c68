#!/usr/bin/env bash
# Kaiser-Bessel gridding alone on data made with BART's own tools, against BART's truth image:
# ours with its default density weights, ours with BART's ramp weights (|k| in 2D, |k|^2 in 3D), and
# `bart nufft -a` with those ramp weights. PSNR and error of each (least-squares scaled, as
# compare.sh's gridded rows). Units and scaling as compare.sh (tools/bart/README.md).
#
# usage: gridding.sh [--dims 2|3] [--n N] [--spokes S] [--noise VAR] [--dc] [--cli PATH] [--work DIR]
#   --dc: spokes that sample k = 0 (`bart traj -r -c`: positions -N/2 .. N/2-1) instead of BART's
#         default half-sample offsets
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
dims=2 n=256 spokes=403 noise=0 dc=""
cli=${RECONSTUDIO_CLI:-reconstudio-cli}
work=$(mktemp -d)
while [[ $# -gt 0 ]]; do
    case $1 in
        --dims) dims=$2; shift 2 ;;
        --n) n=$2; shift 2 ;;
        --spokes) spokes=$2; shift 2 ;;
        --noise) noise=$2; shift 2 ;;
        --dc) dc="-c"; shift ;;
        --cli) cli=$2; shift 2 ;;
        --work) work=$2; mkdir -p "$work"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [[ $cli == */* ]]; then cli=$(realpath "$cli"); fi
cd "$work"
zdim=1
if [[ $dims == 3 ]]; then zdim=$n; fi
# shellcheck source=common.sh
source "$here/common.sh"  # make_radial_data, quality

make_radial_data "$dims" "$n" "$spokes" "$noise" "$dc"  # traj, ksp_bart, ksp_model, truth, weights

"$cli" recon --trajectory traj --kspace ksp_model --basis point --only gridding-kb --output ours.cfl --quiet
"$cli" recon --trajectory traj --kspace ksp_model --basis point --only gridding-kb --density weights --output ours_ramp.cfl --quiet
bart fmac ksp_bart weights ksp_weighted >/dev/null
bart nufft -a -d "$n:$n:$zdim" traj ksp_weighted adjoint >/dev/null

label="${dims}D radial, ${n}^${dims}, ${spokes} spokes${dc:+ through k = 0}, noise variance ${noise}"
row() { read -r psnr err < <(quality truth "$2" 1); printf '| %s | %s | %.2f | %.2f |\n' "$label" "$1" "$psnr" "$err"; }
if [[ ${COMPARE_HEADER:-1} == 1 ]]; then printf '| data | gridding | PSNR dB | error %% |\n|---|---|---|---|\n'; fi
row "ReconStudio Kaiser-Bessel, default weights" ours
row "ReconStudio Kaiser-Bessel, BART's ramp weights" ours_ramp
row "BART nufft -a, ramp weights" adjoint
