#!/usr/bin/env bash
# CPU SENSE against `bart pics` on BART's multi-coil simulation (docs/SENSE.md shows the figures):
#   data:  tools/bart/common.sh make_multicoil_data (`bart traj -r -G` in 2D, the kooshball
#          `-3` in 3D; `bart phantom -s C -k -t`, optionally `bart noise`); truth: the object times
#          the true maps' root sum of squares
#   ours:  `reconstudio-cli recon --coil-combine sense --coil-maps espirit` (fd, our default, and
#          tikhonov, pics -l2's problem) and coil-by-coil sum of squares (fd), best lambda each
#   BART:  `bart ecalib` maps (its `nufft -i` gridding, `fft`, `ecalib -m1`) + `bart pics -S -l2`,
#          best lambda; and pics with the true maps (`bart normalize` of `phantom -S`) for reference.
# Quality: PSNR and % error of the magnitude against the truth (each estimator leaves its own phase).
# Time: `/usr/bin/time` of whole processes, user + system CPU seconds and wall, the median of
# --repeat runs taken in turns (ours, BART, ours, ...): ours is one `recon` (reading, prewhitening,
# ESPIRiT maps, F^H d per coil, Q, the iterations, writing); BART's is `nufft -i`, `fft`, `ecalib`
# and `pics` (maps included), and `pics` alone. Both with OMP_NUM_THREADS (default 2) and
# OMP_WAIT_POLICY=passive. Lambdas: lambda_ours = lambda_bart N^d / M (M samples per coil), the
# same regularisation of the same problem (compare.sh).
# Needs bart, bc, awk, GNU time (/usr/bin/time) and reconstudio-cli.
#
# usage: sense.sh [--cli PATH] [--dims 2|3] [--n N] [--spokes S] [--coils C] [--noise VAR]
#                 [--iterations 60] [--pics-lambdas "bart..."] [--lambdas "ours..."] [--repeat 3]
#                 [--fewer "5 10 15 20 30 40"] [--timed "tikhonov sos"] [--data-weighting uniform|density]
#                 [--work DIR] (SENSE_HEADER=0: no table header)
# --data-weighting: the data term of all our rows (`recon --data-weighting`): density solves
#          min ||D^{1/2} (E x - d)||^2 + ... with gridding's density weights D (docs/SENSE.md); BART's rows as ever.
# --fewer: also our SENSE fd at the fewest of these iteration counts that reaches BART's best PSNR.
# --timed: which of our rows besides SENSE fd are timed (BART's two always are; rows left out
#          show "-"): a 3D run's maps take minutes per process on two cores.
# --sparse "tv wavelet": also SENSE with the sparse priors, ours (--coil-combine sense --regularizer tv|wavelet,
#          --sparse-iterations, our ESPIRiT maps) against `bart pics -R T:F:0:lambda` (ADMM) and
#          `-R W:F:0:lambda --wavelet haar -e` (FISTA) with ecalib's maps, --pics-sparse-iterations, best
#          lambda of --sparse-lambdas / --pics-sparse-lambdas each, and coil-by-coil TV (tv only); each
#          best timed whole (ours with its maps, BART with ecalib) in the same turns. Our sparse lambda is a
#          threshold in image units (docs/SPARSE.md), and this data's images are about 1e5 (the scale
#          N^d / C times the maps' root sum of squares): by default ours sweeps 0.1, 0.3, 1, 3 and 10 times
#          what our --lambda auto chooses for each prior.
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

dims=2 n=128 spokes=64 coils=8 noise=0 iterations=60 repeat=3 fewer="5 10 15 20 30 40" timed_rows="tikhonov sos"
sparse="" sparse_iterations=200 pics_sparse_iterations=300
sparse_lambdas="" pics_sparse_lambdas="0.0001 0.0003 0.001 0.003 0.01" weighting=uniform
pics_lambdas="0 0.0001 0.0003 0.001 0.003 0.01 0.03 0.1 0.3 1"
ours_lambdas=""  # default: pics' grid in our units
cli=${RECONSTUDIO_CLI:-reconstudio-cli}
work=$(mktemp -d)
while [[ $# -gt 0 ]]; do
    case $1 in
        --cli) cli=$2; shift 2 ;;
        --dims) dims=$2; shift 2 ;;
        --n) n=$2; shift 2 ;;
        --spokes) spokes=$2; shift 2 ;;
        --coils) coils=$2; shift 2 ;;
        --noise) noise=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --lambdas) ours_lambdas=$2; shift 2 ;;
        --pics-lambdas) pics_lambdas=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --fewer) fewer=$2; shift 2 ;;
        --timed) timed_rows=$2; shift 2 ;;
        --sparse) sparse=$2; shift 2 ;;
        --sparse-iterations) sparse_iterations=$2; shift 2 ;;
        --pics-sparse-iterations) pics_sparse_iterations=$2; shift 2 ;;
        --sparse-lambdas) sparse_lambdas=$2; shift 2 ;;
        --pics-sparse-lambdas) pics_sparse_lambdas=$2; shift 2 ;;
        --data-weighting) weighting=$2; shift 2 ;;
        --work) work=$2; mkdir -p "$work"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
if [[ $dims != 2 && $dims != 3 ]]; then echo "--dims must be 2 or 3, got $dims" >&2; exit 2; fi
if [[ $weighting != uniform && $weighting != density ]]; then echo "--data-weighting takes uniform or density, got $weighting" >&2; exit 2; fi
ours_label=""; if [[ $weighting == density ]]; then ours_label=", density-weighted data term"; fi
for p in $sparse; do
    if [[ $p != tv && $p != wavelet ]]; then echo "--sparse takes tv and wavelet, got $p" >&2; exit 2; fi
done
if [[ ! -x /usr/bin/time ]]; then echo "sense.sh needs GNU time (/usr/bin/time; Debian package time)" >&2; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
if [[ $cli == */* ]]; then cli=$(realpath "$cli"); fi  # the work folder becomes the current one
# shellcheck source=common.sh
source "$here/common.sh"
cd "$work"

make_multicoil_data "$dims" "$n" "$spokes" "$coils" "$noise"
zdim=1; if [[ $dims == 3 ]]; then zdim=$n; fi
C=$(bart_phantom_constant)
samples=$((n * spokes))
if [[ -z $ours_lambdas ]]; then
    for l in $pics_lambdas; do
        ours_lambdas+=" $(echo "scale=12; $l * $(power "$n" "$dims") / $samples" | bc -l | sed 's/^\./0./')"
    done
fi
if [[ $dims == 3 ]]; then kind="3D kooshball"; else kind="2D golden-angle radial"; fi
label="$kind, ${n}^${dims}, $spokes spokes x $n, $coils coils, noise variance $noise"

# --- quality: best lambda of each sweep -----------------------------------------
ours_run() {  # ours_run OPTIONS... -> the report's JSON
    "$cli" recon --trajectory traj --kspace ksp_model --truth truth --basis point --quiet --only iterative \
        --iterations "${run_iterations:-$iterations}" --data-weighting "$weighting" --output ours.cfl --report report.json "$@" >/dev/null 2>&1
    cat report.json
}
best_ours() {  # best_ours OPTIONS... -> "psnr error lambda"
    local top="" l j p
    for l in $ours_lambdas; do
        j=$(ours_run "$@" --lambda "$l")
        p=$(field "$j" psnr_db)
        if better "$p" "$top"; then top="$p $(field "$j" error_percent) $l"; fi
    done
    echo "$top"
}
pics_scale=$(echo "$(power "$n" "$dims / 2") / $C" | bc -l)
pics_quality() {  # pics_quality MAPS LAMBDA -> "psnr error"
    bart pics -S -l2 -r "$2" -i "$iterations" -t traj ksp_bart "$1" pics >/dev/null 2>&1
    bart cabs pics pics_abs >/dev/null
    bart scale "$pics_scale" pics_abs pics_model >/dev/null
    quality truth pics_model 0
}
best_pics() {  # best_pics MAPS -> "psnr error lambda"
    local top="" l q
    for l in $pics_lambdas; do
        q=$(pics_quality "$1" "$l")
        if better "${q%% *}" "$top"; then top="$q $l"; fi
    done
    echo "$top"
}

bart_ecalib_maps "$dims" "$n" ecalib_maps
# Our ESPIRiT maps once (as BART's ecalib maps above): the sweeps read them back with
# --coil-maps FILE, which gives the very image `--coil-maps espirit` gives (the same float32
# maps; checked at 128^2, byte for byte), so a 3D sweep does not re-estimate them per lambda.
# The timed runs below estimate them in every process.
ours_run --coil-combine sense --coil-maps espirit --coil-maps-output our_maps.cfl --lambda 0 >/dev/null
sense_fd=$(best_ours --coil-combine sense --coil-maps our_maps.cfl --regularizer fd)
sense_tik=$(best_ours --coil-combine sense --coil-maps our_maps.cfl --regularizer tikhonov)
sos_fd=$(best_ours --coil-combine sos --regularizer fd)
pics_ecalib=$(best_pics ecalib_maps)
pics_true=$(best_pics true_maps_unit)
# SENSE with the sparse priors, both sides (--sparse).
flags=3; if [[ $dims == 3 ]]; then flags=7; fi
declare -A pics_term=([tv]="-R T:$flags:0:LAMBDA" [wavelet]="-R W:$flags:0:LAMBDA --wavelet haar -e")
declare -A pics_name=([tv]="pics -R T:$flags:0:lambda (ADMM)" [wavelet]="pics -R W:$flags:0:lambda --wavelet haar -e (FISTA)")
declare -A sense_sparse pics_sparse
sos_tv=""
best_sparse_ours() {  # best_sparse_ours OPTIONS... -> "psnr error lambda"
    local top="" l j p grid=$sparse_lambdas
    if [[ -z $grid ]]; then
        l=$(field "$(run_iterations=$sparse_iterations ours_run "$@" --lambda auto)" lambda)
        for f in 0.1 0.3 1 3 10; do grid+=" $(echo "$l * $f" | bc -l)"; done
    fi
    for l in $grid; do
        j=$(run_iterations=$sparse_iterations ours_run "$@" --lambda "$l")
        p=$(field "$j" psnr_db)
        if better "$p" "$top"; then top="$p $(field "$j" error_percent) $l"; fi
    done
    echo "$top"
}
best_sparse_pics() {  # best_sparse_pics PRIOR -> "psnr error lambda"
    local top="" l q
    for l in $pics_sparse_lambdas; do
        bart pics -S ${pics_term[$1]//LAMBDA/$l} -i "$pics_sparse_iterations" -t traj ksp_bart ecalib_maps pics >/dev/null 2>&1
        bart cabs pics pics_abs >/dev/null
        bart scale "$pics_scale" pics_abs pics_model >/dev/null
        q=$(quality truth pics_model 0)
        if better "${q%% *}" "$top"; then top="$q $l"; fi
    done
    echo "$top"
}
for p in $sparse; do
    sense_sparse[$p]=$(best_sparse_ours --coil-combine sense --coil-maps our_maps.cfl --regularizer "$p")
    pics_sparse[$p]=$(best_sparse_pics "$p")
done
if [[ " $sparse " == *" tv "* ]]; then sos_tv=$(best_sparse_ours --coil-combine sos --regularizer tv); fi
# The fewest of our iterations (of --fewer) whose SENSE fd image reaches BART's best PSNR.
set -- $sense_fd; l_fd=$3
fewer_row=""
for k in $fewer; do
    (( k < iterations )) || break
    j=$(ours_run --coil-combine sense --coil-maps our_maps.cfl --regularizer fd --lambda "$l_fd" --iterations "$k")
    if ! better "${pics_ecalib%% *}" "$(field "$j" psnr_db)"; then
        fewer_row="$(field "$j" psnr_db) $(field "$j" error_percent) $l_fd $k"
        break
    fi
done

# --- time: whole processes at each side's best lambda, in turns ----------------------
export -f bart_ecalib_maps
timed() {  # timed NAME COMMAND... : appends "wall cpu" to NAME.times
    local name=$1; shift
    /usr/bin/time -f "%e %U %S" -o time.txt "$@" >/dev/null 2>&1
    awk '{ printf "%s %.3f\n", $1, $2 + $3 }' time.txt >>"$name.times"
}
ours_cmd() {  # ours_cmd REGULARIZER LAMBDA COMBINE [ITERATIONS]
    echo "$cli" recon --trajectory traj --kspace ksp_model --basis point --quiet --only iterative \
        --iterations "${4:-$iterations}" --data-weighting "$weighting" --coil-combine "$3" --coil-maps espirit --regularizer "$1" \
        --lambda "$2" --output timed.cfl
}
rm -f ./*.times
set -- $sense_tik; l_tik=$3
set -- $sos_fd; l_sos=$3
set -- $pics_ecalib; l_pics=$3
for ((r = 0; r < repeat; ++r)); do
    timed ours_sense_fd $(ours_cmd fd "$l_fd" sense)
    timed bart_ecalib_pics bash -c "bart_ecalib_maps $dims $n timed_maps && bart pics -S -l2 -r $l_pics -i $iterations -t traj ksp_bart timed_maps timed_pics"
    if [[ " $timed_rows " == *" tikhonov "* ]]; then timed ours_sense_tik $(ours_cmd tikhonov "$l_tik" sense); fi
    timed bart_pics bart pics -S -l2 -r "$l_pics" -i "$iterations" -t traj ksp_bart ecalib_maps timed_pics
    if [[ " $timed_rows " == *" sos "* ]]; then timed ours_sos_fd $(ours_cmd fd "$l_sos" sos); fi
    if [[ -n $fewer_row ]]; then timed ours_sense_fewer $(ours_cmd fd "$l_fd" sense "${fewer_row##* }"); fi
    for p in $sparse; do
        set -- ${sense_sparse[$p]}
        timed "ours_sense_$p" $(ours_cmd "$p" "$3" sense "$sparse_iterations")
        set -- ${pics_sparse[$p]}
        timed "bart_ecalib_pics_$p" bash -c "bart_ecalib_maps $dims $n timed_maps && bart pics -S ${pics_term[$p]//LAMBDA/$3} -i $pics_sparse_iterations -t traj ksp_bart timed_maps timed_pics"
    done
done
median() {  # median FILE COLUMN
    sort -g -k"$2" "$1.times" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

if [[ ${SENSE_HEADER:-1} == 1 ]]; then
    echo "| data | method | lambda | PSNR dB | error % | CPU s | wall s |"
    echo "|---|---|---|---|---|---|---|"
fi
row() {  # row METHOD "psnr error lambda" TIMES|-
    local cpu="-" wall="-"
    if [[ $3 != - && -s $3.times ]]; then cpu=$(median "$3" 2); wall=$(median "$3" 1); fi
    set -- "$1" $2 "$cpu" "$wall"
    local method=$1; if [[ $method == ReconStudio* ]]; then method+=$ours_label; fi
    printf '| %s | %s | %.4g | %.2f | %.2f | %s | %s |\n' "$label" "$method" "$4" "$2" "$3" "$5" "$6"
}
row "ReconStudio SENSE, our ESPIRiT maps, fd (x s)" "$sense_fd" ours_sense_fd
row "ReconStudio SENSE, our ESPIRiT maps, Tikhonov (x s)" "$sense_tik" ours_sense_tik
if [[ -n $fewer_row ]]; then
    row "ReconStudio SENSE, our ESPIRiT maps, fd (x s), ${fewer_row##* } iterations: BART's best reached" "${fewer_row% *}" ours_sense_fewer
fi
row "ReconStudio coil-by-coil + sum of squares, fd (x s)" "$sos_fd" ours_sos_fd
row "BART ecalib + pics -l2 (nufft -i, fft, ecalib, pics)" "$pics_ecalib" bart_ecalib_pics
row "BART pics -l2 alone, with ecalib's maps" "$pics_ecalib" bart_pics
row "BART pics -l2, true maps (reference)" "$pics_true" -
for p in $sparse; do
    row "ReconStudio SENSE, our ESPIRiT maps, $p, $sparse_iterations iterations" "${sense_sparse[$p]}" "ours_sense_$p"
    row "BART ecalib + ${pics_name[$p]}, $pics_sparse_iterations iterations" "${pics_sparse[$p]}" "bart_ecalib_pics_$p"
done
if [[ -n $sos_tv ]]; then row "ReconStudio coil-by-coil + sum of squares, tv, $sparse_iterations iterations" "$sos_tv" -; fi
ratio() { printf '%.2f' "$(echo "$(median "$1" "$3") / $(median "$2" "$3")" | bc -l)"; }
echo
echo "BART (ecalib + pics) / ours (SENSE fd, with maps): CPU $(ratio bart_ecalib_pics ours_sense_fd 2)x, wall $(ratio bart_ecalib_pics ours_sense_fd 1)x;" \
     "pics alone / ours: CPU $(ratio bart_pics ours_sense_fd 2)x, wall $(ratio bart_pics ours_sense_fd 1)x" \
     "(medians of $repeat, $OMP_NUM_THREADS threads each)"
if [[ -n $fewer_row ]]; then
    echo "BART (ecalib + pics) / ours at ${fewer_row##* } iterations (BART's PSNR reached): CPU $(ratio bart_ecalib_pics ours_sense_fewer 2)x, wall $(ratio bart_ecalib_pics ours_sense_fewer 1)x"
fi
echo "SENSE fd - sum of squares fd: $(printf '%+.2f' "$(echo "${sense_fd%% *} - ${sos_fd%% *}" | bc -l)") dB;" \
     "SENSE fd - BART ecalib + pics: $(printf '%+.2f' "$(echo "${sense_fd%% *} - ${pics_ecalib%% *}" | bc -l)") dB"
for p in $sparse; do
    echo "SENSE $p: ours - BART ecalib + ${pics_name[$p]%% (*}: $(printf '%+.2f' "$(echo "${sense_sparse[$p]%% *} - ${pics_sparse[$p]%% *}" | bc -l)") dB;" \
         "BART / ours: CPU $(ratio "bart_ecalib_pics_$p" "ours_sense_$p" 2)x, wall $(ratio "bart_ecalib_pics_$p" "ours_sense_$p" 1)x"
done
if [[ -n $sos_tv ]]; then
    echo "SENSE tv - coil-by-coil tv: $(printf '%+.2f' "$(echo "${sense_sparse[tv]%% *} - ${sos_tv%% *}" | bc -l)") dB"
fi
