#!/usr/bin/env bash
# Side by side on data made with BART's own tools, against BART's truth image:
#   ours:  reconstudio-cli compare: iterative CG with Tikhonov (the same problem as
#          pics -l2) and with finite differences (our default), best lambda of a sweep;
#          Kaiser-Bessel gridding with our default weights and with BART's weights
#   BART:  `bart pics -l2` (60 iterations, best lambda of a sweep) and the adjoint NUFFT
#          with radial density weights (|k| in 2D, |k|^2 in 3D)
# Prints Markdown table rows (tools/bart/table.sh runs the README's cases).
# Needs bart, bc, awk and a reconstudio-cli with --basis (BART's phantom data are
# point samples, so the point basis is the matching model).
#
# Units: `bart phantom -k -t` is C/N^d times this program's model (C = 4 sqrt(2) /
# pi^(3/2)); BART's NUFFT is N^(-d/2) times the plain NDFT. The known constants
# are applied (with `bart scale`), never fitted: our data are scaled by N^d/C
# before reading and pics' result by N^(d/2)/C; iterative results are then
# compared as they are. Gridded images (ours and BART's adjoint) get the
# least-squares optimal scalar, as docs/CONVENTIONS.md prescribes. Both sweep
# the same regularisation: BART's normal operator is N^-d times ours and our
# lambda multiplies s = Q(0) = M (point basis), so lambda_ours = lambda_bart * N^d / M.
#
# usage: compare.sh [--dims 2|3] [--n N] [--spokes S] [--noise VAR] [--cli PATH] [--work DIR]
#                   [--lambdas "ours..."] [--pics-lambdas "bart..."] [--iterations 60]
#                   [--precision float32|float64]
set -euo pipefail
# Both programs use OpenMP; on a loaded machine spinning threads cost seconds per
# solve, so both yield the CPU while they wait (the same setting for both).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

dims=2 n=128 spokes=201 noise=0 iterations=60 precision=float64
cli=${RECONSTUDIO_CLI:-reconstudio-cli}
work=$(mktemp -d)
ours_lambdas=""  # default: pics' grid in our units (below)
pics_lambdas="0 0.00001 0.0001 0.001 0.003 0.01 0.03 0.1 0.3 1 3 10"
while [[ $# -gt 0 ]]; do
    case $1 in
        --dims) dims=$2; shift 2 ;;
        --n) n=$2; shift 2 ;;
        --spokes) spokes=$2; shift 2 ;;
        --noise) noise=$2; shift 2 ;;
        --cli) cli=$2; shift 2 ;;
        --work) work=$2; mkdir -p "$work"; shift 2 ;;
        --lambdas) ours_lambdas=$2; shift 2 ;;
        --pics-lambdas) pics_lambdas=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --precision) precision=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
cd "$work"
zdim=1
if [[ $dims == 3 ]]; then zdim=$n; fi

# shellcheck source=common.sh
source "$here/common.sh"  # quality, seconds, power, better, field

# --- data, made by BART ---------------------------------------------------
make_radial_data "$dims" "$n" "$spokes" "$noise"  # traj, ksp_bart, ksp_model, truth, weights
C=$(bart_phantom_constant)
if [[ -z $ours_lambdas ]]; then
    for l in $pics_lambdas; do
        ours_lambdas+=" $(echo "scale=12; $l * $(power "$n" "$dims") / ($n * $spokes)" | bc -l | sed 's/^\./0./')"
    done
fi
label="${dims}D radial, ${n}^${dims}, ${spokes} spokes x ${n}, noise variance ${noise}"

# --- ours: best lambda over the sweep --------------------------------------
ours() {  # ours EXTRA_ARGS... -> the JSON line of `compare`
    "$cli" compare --trajectory traj --kspace ksp_model --truth truth --basis point --precision "$precision" \
        --iterations "$iterations" --json --quiet --no-floor "$@" | tail -n 1
}
declare -A best_ours
kb=""
for regularizer in tikhonov fd; do
    best_ours[$regularizer]=""
    for lambda in $ours_lambdas; do
        json=$(ours --regularizer "$regularizer" --lambda "$lambda")
        it=$(echo "$json" | grep -o '{"name":"iterative"[^}]*}')
        kb=$(echo "$json" | grep -o '{"name":"gridding-kb"[^}]*}')
        psnr=$(field "$it" psnr_db)
        if better "$psnr" "${best_ours[$regularizer]}"; then
            best_ours[$regularizer]="$psnr $(field "$it" error_percent) $(field "$it" seconds) $lambda"
        fi
    done
done
kb_ours="$(field "$kb" psnr_db) $(field "$kb" error_percent) $(field "$kb" seconds)"
kb=$(ours --iterations 0 --density weights | grep -o '{"name":"gridding-kb"[^}]*}')
kb_ramp="$(field "$kb" psnr_db) $(field "$kb" error_percent) $(field "$kb" seconds)"

# --- BART pics -l2, 60 iterations, best lambda ------------------------------
bart ones 3 "$n" "$n" "$zdim" sens >/dev/null
best_pics=""
for lambda in $pics_lambdas; do
    t0=$(date +%s.%N)
    bart pics -S -l2 -r "$lambda" -i "$iterations" -t traj ksp_bart sens pics >/dev/null 2>&1
    dt=$(seconds "$t0")
    bart scale "$(echo "$(power "$n" "$dims / 2") / $C" | bc -l)" pics pics_model >/dev/null
    read -r psnr err < <(quality truth pics_model 0)
    if better "$psnr" "$best_pics"; then best_pics="$psnr $err $dt $lambda"; fi
done

# --- BART adjoint NUFFT with radial density weights ---------------------------
t0=$(date +%s.%N)
bart fmac ksp_bart weights ksp_weighted >/dev/null
bart nufft -a -d "$n:$n:$zdim" traj ksp_weighted adjoint >/dev/null
dt=$(seconds "$t0")
read -r adj_psnr adj_err < <(quality truth adjoint 1)

row() { printf '| %s | %s | %.2f | %.2f | %.2f |\n' "$label" "$1" "$2" "$3" "$4"; }
if [[ ${COMPARE_HEADER:-1} == 1 ]]; then
    printf '| data | method | PSNR dB | error %% | seconds |\n|---|---|---|---|---|\n'
fi
set -- ${best_ours[tikhonov]}; row "ReconStudio iterative, Tikhonov, lambda $(printf %.3g "$4") x s ($precision)" "$1" "$2" "$3"
set -- ${best_ours[fd]};       row "ReconStudio iterative, finite differences, lambda $(printf %.3g "$4") x s ($precision)" "$1" "$2" "$3"
set -- $best_pics;             row "BART pics -l2, lambda $4" "$1" "$2" "$3"
# Our default weights (ReconstructionSession::kaiserBesselDensityMethod): the radial ramp for
# spokes at most 2x below Nyquist (pi n/2 spokes in 2D, pi n^2/2 in 3D), Pipe-Menon otherwise.
if [[ $dims == 3 ]]; then nyquist=$(echo "4 * a(1) * $n * $n / 2" | bc -l); else nyquist=$(echo "4 * a(1) * $n / 2" | bc -l); fi
if (( $(echo "$nyquist / $spokes <= 2" | bc -l) )); then kb_default="radial ramp"; else kb_default="Pipe-Menon"; fi
set -- $kb_ours;               row "ReconStudio Kaiser-Bessel gridding, default weights ($kb_default)" "$1" "$2" "$3"
set -- $kb_ramp;               row "ReconStudio Kaiser-Bessel gridding, BART's ramp weights" "$1" "$2" "$3"
row "BART nufft -a, ramp weights" "$adj_psnr" "$adj_err" "$dt"
