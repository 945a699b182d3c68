#!/usr/bin/env bash
# Sparse priors on one undersampled radial case made by BART: ours (`reconstudio-cli recon`: TV by ADMM,
# Haar wavelets by POGM, finite differences by CG, each at the best lambda of a sweep and at --lambda
# auto) against `bart pics` (-R T, ADMM; -R W with --wavelet haar, FISTA with -e; -l2), best lambda of a
# sweep each. PSNR and percent error against BART's truth (`bart phantom -x N`, -3 in 3D), and each
# best run's whole process timed by /usr/bin/time: wall seconds and CPU seconds (user + sys).
# Both sides: OMP_NUM_THREADS=2 (ours --threads 2), OMP_WAIT_POLICY=passive, the same machine, one run.
#
# Data: 2D golden-angle radial (`bart traj -r -G`) or the 3D kooshball (`bart traj -3 -r`), full spokes
# of N samples, `bart phantom -k -t` (+ `bart noise -s 1 -n VAR`). Units as in compare.sh: our data are
# BART's times N^d/C, pics' result is scaled by N^(d/2)/C (C = 4 sqrt(2)/pi^(3/2)); ours runs with
# --basis point (BART's phantom k-space is the transform of point samples).
#
# Prints Markdown rows | data | method | lambda | PSNR dB | error % | wall s | CPU s | and, last, one
# summary row: ours' best against BART's best, the PSNR difference and the time ratios.
#
# usage: sparse.sh [--dims 2|3] [--n N] [--spokes S] [--noise VAR] [--iterations OURS] [--pics-iterations B]
#                  [--lambdas "ours..."] [--pics-lambdas "bart..."] [--cli PATH] [--work DIR] [--header 0|1]
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
dims=2 n=128 spokes=64 noise=0 header=1
ours_iterations=200 pics_iterations=1000 l2_iterations=100
# Ours: a sparse lambda is a threshold relative to an image of magnitude about 1 (docs/CONVENTIONS.md).
ours_lambdas="0.01 0.02 0.05 0.1 0.2 0.5 1"
# BART's: relative to its own scaling of the data (pics prints it); TV and wavelets peak inside this grid.
pics_lambdas="0.0003 0.001 0.002 0.005 0.01 0.03"
pics_l2_lambdas="0 0.001 0.01 0.1 0.3 1 3"
cli=${RECONSTUDIO_CLI:-reconstudio-cli}
work=$(mktemp -d)
while [[ $# -gt 0 ]]; do
    case $1 in
        --dims) dims=$2; shift 2 ;;
        --n) n=$2; shift 2 ;;
        --spokes) spokes=$2; shift 2 ;;
        --noise) noise=$2; shift 2 ;;
        --iterations) ours_iterations=$2; shift 2 ;;
        --pics-iterations) pics_iterations=$2; shift 2 ;;
        --lambdas) ours_lambdas=$2; shift 2 ;;
        --pics-lambdas) pics_lambdas=$2; shift 2 ;;
        --cli) cli=$2; shift 2 ;;
        --work) work=$2; mkdir -p "$work"; shift 2 ;;
        --header) header=$2; shift 2 ;;
        *) echo "sparse.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $dims == 2 || $dims == 3 ]] || { echo "sparse.sh: --dims must be 2 or 3" >&2; exit 2; }
command -v bart >/dev/null || { echo "sparse.sh: bart is not installed (Debian package bart)" >&2; exit 2; }
cli=$(realpath "$(command -v "$cli")") || { echo "sparse.sh: no reconstudio-cli (--cli PATH or RECONSTUDIO_CLI)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
cd "$work"
power() { echo "e($2 * l($1))" | bc -l; }  # bc's ^ takes integer exponents only
quality() {  # quality TRUTH IMAGE -> "psnr error%"
    local nt; nt=$(bart show -s $'\n' -f '%+.9e%+.9ei' "$1" | wc -l)
    { bart show -s $'\n' -f '%+.9e%+.9ei' "$1"; bart show -s $'\n' -f '%+.9e%+.9ei' "$2"; } |
        awk -v NT="$nt" -v RESCALE=0 -f "$here/quality.awk"
}
field() { echo "$1" | sed "s/.*\"$2\":\([^,}]*\).*/\1/"; }  # field JSON_OBJECT NAME
timed() {  # timed CMD... -> runs it, leaves "wall cpu" in $times (CPU = user + sys)
    /usr/bin/time -f "%e %U %S" -o time.txt "$@" >/dev/null 2>run.err || { cat run.err >&2; return 1; }
    times=$(awk 'END { printf "%.2f %.2f", $1, $2 + $3 }' time.txt)
}

# --- data, made by BART -----------------------------------------------------------------------------
if [[ $dims == 3 ]]; then three=-3 zdim=$n flags=7; else three="" zdim=1 flags=3; fi
if [[ $dims == 3 ]]; then bart traj -3 -r -x "$n" -y "$spokes" traj >/dev/null; else bart traj -r -G -x "$n" -y "$spokes" traj >/dev/null; fi
bart phantom $three -k -t traj ksp_bart >/dev/null
if [[ $noise != 0 ]]; then
    bart noise -s 1 -n "$noise" ksp_bart ksp_noisy >/dev/null
    mv ksp_noisy.cfl ksp_bart.cfl; mv ksp_noisy.hdr ksp_bart.hdr
fi
bart phantom $three -x "$n" truth >/dev/null
C=$(echo "4 * sqrt(2) / $(power "4 * a(1)" 1.5)" | bc -l)
bart scale "$(echo "$(power "$n" "$dims") / $C" | bc -l)" ksp_bart ksp_model >/dev/null
bart ones 3 "$n" "$n" "$zdim" sens >/dev/null
if [[ $noise == 0 ]]; then noise_label=noiseless; else noise_label="noise variance $noise"; fi
if [[ $dims == 3 ]]; then shape="3D kooshball"; nyq=$(echo "4 * a(1) * $n * $n / 2" | bc -l); else shape="2D golden-angle radial"; nyq=$(echo "4 * a(1) * $n / 2" | bc -l); fi
label="$shape, ${n}^${dims}, ${spokes} spokes x ${n} ($(printf %.1f "$(echo "$nyq / $spokes" | bc -l)")x below Nyquist), $noise_label"

row() { printf '| %s | %s | %s | %.2f | %.2f | %s | %s |\n' "$label" "$1" "$2" "$3" "$4" "$5" "$6"; }
edge() {  # edge INDEX GRID... -> " (sweep's edge)" where the best is the grid's first or last value
    local i=$1; shift
    if [[ $i == 1 || $i == "$#" ]]; then echo " (sweep's edge)"; fi
}
consider() {  # consider SIDE PSNR ERROR WALL CPU NAME
    local side=$1; shift
    local cur; cur=$(eval echo "\${best_$side:-}")
    if [[ -z $cur ]] || (( $(echo "$1 > ${cur%% *}" | bc -l) )); then eval "best_$side=\"\$*\""; fi
}
if [[ $header == 1 ]]; then
    printf '| data | method | lambda | PSNR dB | error %% | wall s | CPU s |\n|---|---|---|---|---|---|---|\n'
fi

# --- ours ---------------------------------------------------------------------------------------------
ours() {  # ours PRIOR LAMBDA ITERATIONS -> "psnr error lambda wall cpu"
    timed "$cli" recon --trajectory traj --kspace ksp_model --truth truth --basis point --only iterative \
        --regularizer "$1" --lambda "$2" --iterations "$3" --threads 2 --quiet --output ours.cfl --report ours.json
    local j; j=$(cat ours.json)
    echo "$(field "$j" psnr_db) $(field "$j" error_percent) $(field "$j" lambda) $times"
}
declare -A solver=([tv]="TV (ADMM)" [wavelet]="Haar wavelets (POGM)" [fd]="finite differences (CG)")
# The quadratic grid: pics' l2 grid in our units (lambda_ours = lambda_bart N^d / M, compare.sh).
fd_lambdas=""
for l in $pics_l2_lambdas; do
    fd_lambdas+=" $(echo "scale=12; $l * $(power "$n" "$dims") / ($n * $spokes)" | bc -l | sed 's/^\./0./')"
done
for prior in tv wavelet fd; do
    if [[ $prior == fd ]]; then grid=$fd_lambdas it=60; else grid=$ours_lambdas it=$ours_iterations; fi
    best="" i=0 best_i=0
    for l in $grid; do
        r=$(ours "$prior" "$l" "$it"); i=$((i + 1))
        if [[ -z $best ]] || (( $(echo "${r%% *} > ${best%% *}" | bc -l) )); then best=$r best_i=$i; fi
    done
    set -- $best
    edge=$(edge "$best_i" $grid)
    row "ReconStudio ${solver[$prior]}, $it iterations, best of sweep" "$(printf %.3g "$3") x s$edge" "$1" "$2" "$4" "$5"
    consider ours "$1" "$2" "$4" "$5" "ReconStudio ${solver[$prior]}"
    if [[ $prior != fd ]]; then
        # The best lambda again with three times the iterations: how far the sweep's solves were from converged.
        set -- $(ours "$prior" "$3" $((3 * it)))
        row "ReconStudio ${solver[$prior]}, $((3 * it)) iterations, the sweep's best lambda" "$(printf %.3g "$3") x s" "$1" "$2" "$4" "$5"
        consider ours "$1" "$2" "$4" "$5" "ReconStudio ${solver[$prior]}, $((3 * it)) iterations"
        set -- $(ours "$prior" auto "$it")
        row "ReconStudio ${solver[$prior]}, $it iterations, lambda auto" "$(printf %.3g "$3") x s" "$1" "$2" "$4" "$5"
    fi
done

# --- BART ---------------------------------------------------------------------------------------------
pics() {  # pics LAMBDA ARGS... -> "psnr error lambda wall cpu"
    local l=$1; shift
    timed bart pics -S "$@" -t traj ksp_bart sens pics
    bart scale "$(echo "$(power "$n" "$dims / 2") / $C" | bc -l)" pics pics_model >/dev/null
    echo "$(quality truth pics_model) $l $times"
}
for method in T W l2; do
    best="" i=0 best_i=0
    if [[ $method == l2 ]]; then grid=$pics_l2_lambdas; else grid=$pics_lambdas; fi
    for l in $grid; do
        i=$((i + 1))
        case $method in
            T) r=$(pics "$l" -R "T:$flags:0:$l" -i "$pics_iterations"); name="pics -R T:$flags:0:lambda (ADMM), $pics_iterations iterations" ;;
            W) r=$(pics "$l" -R "W:$flags:0:$l" --wavelet haar -e -i "$pics_iterations"); name="pics -R W:$flags:0:lambda --wavelet haar -e (FISTA), $pics_iterations iterations" ;;
            l2) r=$(pics "$l" -l2 -r "$l" -i "$l2_iterations"); name="pics -l2 -r lambda, $l2_iterations iterations" ;;
        esac
        if [[ -z $best ]] || (( $(echo "${r%% *} > ${best%% *}" | bc -l) )); then best=$r best_i=$i; fi
    done
    set -- $best
    edge=$(edge "$best_i" $grid)
    row "BART $name, best of sweep" "$3$edge" "$1" "$2" "$4" "$5"
    consider bart "$1" "$2" "$4" "$5" "BART $name"
done

# --- ours' best against BART's best -------------------------------------------------------------------
set -- $best_ours; po=$1 wo=$3 co=$4; shift 4; no="$*"
set -- $best_bart; pb=$1 wb=$3 cb=$4; shift 4; nb="$*"; nb=${nb%%,*}
printf '| %s | **best: %s vs %s** | | %+.2f dB | | %.3f x | %.3f x |\n' "$label" "$no" "$nb" \
    "$(echo "$po - $pb" | bc -l)" "$(echo "$wo / $wb" | bc -l)" "$(echo "$co / $cb" | bc -l)"
