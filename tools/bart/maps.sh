#!/usr/bin/env bash
# Coil maps and SENSE on BART's multi-coil simulation (docs/SENSE.md shows the figures):
#   data:  `bart traj -r -G` (golden-ratio radial), `bart phantom -s C -k -t` (C coils'
#          k-space, optionally `bart noise`), the true maps `bart phantom -S C`, the object
#          `bart phantom -x N`; truth for PSNR: the object times the true maps' root sum of squares
#   maps:  ours (`reconstudio-cli recon --coil-combine sense --coil-maps espirit|walsh
#          --coil-maps-output`) and `bart ecalib -m1` on BART's own gridding (`bart nufft -i`,
#          `bart fft`), each against the true maps and ours against ecalib's, inside the
#          object, up to each voxel's phase (tools/bart/map_agreement.py)
#   SENSE: `reconstudio-cli compare` (SENSE and coil-by-coil sum of squares, fd prior) with our
#          ESPIRiT maps, with ecalib's (--coil-maps FILE) and with the true maps, best lambda of
#          a sweep for each row.
# Units as tools/bart/compare.sh: BART's k-space times N^2/C (C = 4 sqrt(2) / pi^(3/2)), --basis point.
# Needs bart, bc, awk, Debian's python3-numpy (/usr/bin/python3) and reconstudio-cli.
#
# usage: maps.sh [--cli PATH] [--n N] [--spokes S] [--coils C] [--noise VAR] [--iterations 60]
#                [--lambdas "0.002 0.01 0.05"] [--work DIR]
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

n=128 spokes=64 coils=8 noise=0 iterations=60 lambdas="0.002 0.01 0.05"
cli=${RECONSTUDIO_CLI:-reconstudio-cli}
work=$(mktemp -d)
while [[ $# -gt 0 ]]; do
    case $1 in
        --cli) cli=$2; shift 2 ;;
        --n) n=$2; shift 2 ;;
        --spokes) spokes=$2; shift 2 ;;
        --coils) coils=$2; shift 2 ;;
        --noise) noise=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --lambdas) lambdas=$2; shift 2 ;;
        --work) work=$2; mkdir -p "$work"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [[ $cli == */* ]]; then cli=$(realpath "$cli"); fi  # the work folder becomes the current one
cd "$work"

# --- data, made by BART (tools/bart/common.sh) -----------------------------
# shellcheck source=common.sh
source "$here/common.sh"
make_multicoil_data 2 "$n" "$spokes" "$coils" "$noise"
data=(--trajectory traj --kspace ksp_model --truth truth --basis point --quiet)

# --- maps -----------------------------------------------------------------
t_ecalib=$(
    t0=$(date +%s.%N)
    bart_ecalib_maps 2 "$n" ecalib_maps
    echo "$(date +%s.%N) - $t0" | bc)
for m in espirit walsh; do
    "$cli" recon "${data[@]}" --coil-combine sense --coil-maps $m --iterations 1 --only iterative \
        --output "sense_$m.cfl" --coil-maps-output "ours_$m" 2>/dev/null
done
agree() { /usr/bin/python3 "$here/map_agreement.py" "$1" "$2" object; }
echo "BART data: ${n}^2, $spokes golden-ratio radial spokes x $n, $coils coils, noise variance $noise"
echo "bart ecalib (with its nufft -i gridding): $(printf '%.1f' "$t_ecalib") s on this machine"
echo
echo "Coil maps inside the object (|bart phantom| > 0.05), up to each voxel's phase (error per voxel sqrt(2 - 2|<s,r>|)):"
echo "| maps | against | voxels, outside a mask | rms | p99 | max |"
echo "|---|---|---|---|---|---|"
row() {  # row NAME AGAINST ESTIMATE REFERENCE
    agree "$3" "$4" | sed -E "s/^([0-9]+) voxels compared, ([0-9]+) outside a mask: rms ([0-9.]+), p99 ([0-9.]+), max ([0-9.]+)/| $1 | $2 | \1, \2 | \3 | \4 | \5 |/"
}
row "ours, ESPIRiT" "true maps" ours_espirit true_maps
row "ours, Walsh" "true maps" ours_walsh true_maps
row "bart ecalib" "true maps" ecalib_maps true_maps
row "ours, ESPIRiT" "bart ecalib" ours_espirit ecalib_maps

# --- SENSE vs sum of squares ------------------------------------------------
psnr() {  # psnr OPTIONS... -> the iterative image's PSNR against the truth (recon --report)
    "$cli" recon "${data[@]}" --iterations "$iterations" "$@" --only iterative --output image.cfl --report report.json >/dev/null 2>&1
    sed 's/.*"psnr_db":\([^,}]*\).*/\1/' report.json
}
best() {  # best OPTIONS... -> "psnr lambda", the best of the sweep
    local top="" l p
    for l in $lambdas; do
        p=$(psnr "$@" --lambda "$l")
        if [[ -z $top ]] || (( $(echo "$p > ${top%% *}" | bc -l) )); then top="$p $l"; fi
    done
    echo "$top"
}
sos=$(best --coil-combine sos)
echo
echo "SENSE against coil-by-coil sum of squares (fd prior, $iterations CG iterations, float32, best lambda of: $lambdas):"
echo "| maps | SENSE PSNR dB (lambda) | SENSE - sum of squares dB |"
echo "|---|---|---|"
for m in "espirit|ours, ESPIRiT" "walsh|ours, Walsh" "ecalib_maps.cfl|bart ecalib" "true_maps_unit.cfl|true maps (bart phantom -S, normalised)"; do
    r=$(best --coil-combine sense --coil-maps "${m%%|*}")
    printf '| %s | %.2f (%s) | %+.2f |\n' "${m##*|}" "${r%% *}" "${r##* }" "$(echo "${r%% *} - ${sos%% *}" | bc -l)"
done
printf '| (coil-by-coil sum of squares) | %.2f (%s) | |\n' "${sos%% *}" "${sos##* }"
