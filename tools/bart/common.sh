# Helpers the BART comparisons share (sourced by compare.sh, maps.sh and sense.sh; `here` must name
# this folder). Units: docs/CONVENTIONS.md and tools/bart/README.md.

power() { echo "e($2 * l($1))" | bc -l; }  # power BASE EXPONENT (bc's ^ takes integer exponents only)
# BART's analytic phantom k-space is C/N^d times our model: C = 4 sqrt(2) / pi^(3/2).
bart_phantom_constant() { echo "4 * sqrt(2) / $(power "4 * a(1)" 1.5)" | bc -l; }
seconds() { echo "$(date +%s.%N) - $1" | bc; }
better() { [[ -z $2 ]] || (( $(echo "$1 > ${2%% *}" | bc -l) )); }  # better PSNR CURRENT_BEST_ROW
field() { echo "$1" | sed "s/.*\"$2\":\([^,}]*\).*/\1/"; }         # field JSON_OBJECT NAME

quality() {  # quality TRUTH IMAGE RESCALE -> "psnr error%"
    local nt; nt=$(bart show -s $'\n' -f '%+.9e%+.9ei' "$1" | wc -l)
    { bart show -s $'\n' -f '%+.9e%+.9ei' "$1"; bart show -s $'\n' -f '%+.9e%+.9ei' "$2"; } |
        awk -v NT="$nt" -v RESCALE="$3" -f "$here/quality.awk"
}

# make_radial_data DIMS N SPOKES NOISE [TRAJ_FLAGS]: in the current folder, BART's single-coil radial data:
#   traj        `bart traj -r [-3] TRAJ_FLAGS` (e.g. -c: spokes through k = 0)
#   ksp_bart    `bart phantom -k -t traj` (+ `bart noise -s 1 -n NOISE` unless NOISE is 0)
#   ksp_model   ksp_bart in our units (x N^d / C)
#   truth       `bart phantom -x N`
#   weights     BART's radial density weights (|k| in 2D, |k|^2 in 3D), for its adjoint
make_radial_data() {
    local dims=$1 n=$2 spokes=$3 noise=$4 flags=${5:-} three="" c
    if [[ $dims == 3 ]]; then three="-3"; fi
    bart traj -r $flags $three -x "$n" -y "$spokes" traj >/dev/null
    bart phantom $three -k -t traj ksp_bart >/dev/null
    if [[ $noise != 0 ]]; then
        bart noise -s 1 -n "$noise" ksp_bart ksp_noisy >/dev/null
        mv ksp_noisy.cfl ksp_bart.cfl; mv ksp_noisy.hdr ksp_bart.hdr
    fi
    bart phantom $three -x "$n" truth >/dev/null
    c=$(bart_phantom_constant)
    bart scale "$(echo "$(power "$n" "$dims") / $c" | bc -l)" ksp_bart ksp_model >/dev/null
    bart rss 1 traj kabs >/dev/null
    if [[ $dims == 3 ]]; then bart fmac kabs kabs weights >/dev/null; else cp kabs.cfl weights.cfl; cp kabs.hdr weights.hdr; fi
}

# make_multicoil_data DIMS N SPOKES COILS NOISE: in the current folder, BART's multi-coil simulation:
#   traj        `bart traj -r` (2D: golden-ratio -G; 3D: kooshball -3)
#   ksp_bart    `bart phantom -s COILS -k -t traj` (+ `bart noise -s 1 -n NOISE` unless NOISE is 0)
#   ksp_model   ksp_bart in our units (x N^d / C)
#   true_maps   `bart phantom -S COILS`, true_maps_unit the same normalised (root sum of squares 1)
#   object      `bart phantom -x N`
#   truth       object x rss(true maps): what SENSE with unit-norm maps and coil-by-coil sum of squares estimate
make_multicoil_data() {
    local dims=$1 n=$2 spokes=$3 coils=$4 noise=$5 three="" kind="-G" c
    if [[ $dims == 3 ]]; then three="-3"; kind="-3"; fi
    bart traj -r $kind -x "$n" -y "$spokes" traj >/dev/null
    bart phantom $three -s "$coils" -k -t traj ksp_bart >/dev/null
    if [[ $noise != 0 ]]; then
        bart noise -s 1 -n "$noise" ksp_bart ksp_noisy >/dev/null
        mv ksp_noisy.cfl ksp_bart.cfl; mv ksp_noisy.hdr ksp_bart.hdr
    fi
    bart phantom $three -S "$coils" -x "$n" true_maps >/dev/null
    bart phantom $three -x "$n" object >/dev/null
    bart rss 8 true_maps true_rss >/dev/null
    bart fmac object true_rss truth >/dev/null
    bart normalize 8 true_maps true_maps_unit >/dev/null
    c=$(bart_phantom_constant)
    bart scale "$(echo "$(power "$n" "$dims") / $c" | bc -l)" ksp_bart ksp_model >/dev/null
}

# bart_ecalib_maps DIMS N OUTPUT: BART's map estimate from ksp_bart: its iterative gridding
# (`bart nufft -i`), `bart fft -u`, `bart ecalib -m1` (tools/bart/maps.sh, docs/SENSE.md).
bart_ecalib_maps() {
    local dims=$1 n=$2 zdim=1 axes=3
    if [[ $dims == 3 ]]; then zdim=$n; axes=7; fi
    bart nufft -i -d "$n:$n:$zdim" traj ksp_bart coil_images >/dev/null
    bart fft -u $axes coil_images cartesian >/dev/null
    bart ecalib -m1 cartesian "$3" >/dev/null
}
