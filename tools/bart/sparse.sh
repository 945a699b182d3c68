#!/usr/bin/env bash
# Total variation on data made by BART: ours (ADMM over the Toeplitz CG, `compare --regularizer tv`)
# against `bart pics -R T` (BART's ADMM), best lambda of each sweep, PSNR and error against BART's
# truth, wall seconds as each program reports them (ours: F^H d, Q and the iterations).
# Units as in compare.sh: our data are BART's times N^d/C, pics' result is scaled by N^(d/2)/C.
#
# usage: sparse.sh [--n N] [--spokes S] [--iterations "ours..."] [--pics-iterations "bart..."]
#                  [--lambdas "ours..."] [--pics-lambdas "bart..."] [--cli PATH] [--work DIR]
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
n=128 spokes=64 dims=2
ours_iterations="200 600" pics_iterations="200 1000"
ours_lambdas="0.01 0.03 0.05 0.1 0.3" pics_lambdas="0.001 0.002 0.003 0.005 0.01"
cli=${RECONSTUDIO_CLI:-reconstudio-cli}
work=$(mktemp -d)
while [[ $# -gt 0 ]]; do
    case $1 in
        --n) n=$2; shift 2 ;;
        --spokes) spokes=$2; shift 2 ;;
        --iterations) ours_iterations=$2; shift 2 ;;
        --pics-iterations) pics_iterations=$2; shift 2 ;;
        --lambdas) ours_lambdas=$2; shift 2 ;;
        --pics-lambdas) pics_lambdas=$2; shift 2 ;;
        --cli) cli=$2; shift 2 ;;
        --work) work=$2; mkdir -p "$work"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
cd "$work"
power() { echo "e($2 * l($1))" | bc -l; }
quality() {  # quality TRUTH IMAGE RESCALE -> "psnr error%"
    local nt; nt=$(bart show -s $'\n' -f '%+.9e%+.9ei' "$1" | wc -l)
    { bart show -s $'\n' -f '%+.9e%+.9ei' "$1"; bart show -s $'\n' -f '%+.9e%+.9ei' "$2"; } |
        awk -v NT="$nt" -v RESCALE="$3" -f "$here/quality.awk"
}
field() { echo "$1" | sed "s/.*\"$2\":\([^,}]*\).*/\1/"; }
bart traj -r -x "$n" -y "$spokes" traj >/dev/null
bart phantom -k -t traj ksp_bart >/dev/null
bart phantom -x "$n" truth >/dev/null
C=$(echo "4 * sqrt(2) / $(power "4 * a(1)" 1.5)" | bc -l)
bart scale "$(echo "$(power "$n" "$dims") / $C" | bc -l)" ksp_bart ksp_model >/dev/null
bart ones 3 "$n" "$n" 1 sens >/dev/null
label="2D radial, ${n}^2, ${spokes} spokes x ${n}, noiseless"
printf '| data | method | PSNR dB | error %% | seconds |\n|---|---|---|---|---|\n'
for it in $ours_iterations; do
    best=""
    for l in $ours_lambdas; do
        j=$("$cli" compare --trajectory traj --kspace ksp_model --truth truth --basis point --precision float32 \
            --iterations "$it" --json --quiet --no-floor --regularizer tv --lambda "$l" | tail -n 1 |
            grep -o '{"name":"iterative-tv"[^}]*}')
        p=$(field "$j" psnr_db)
        if [[ -z $best ]] || (( $(echo "$p > ${best%% *}" | bc -l) )); then best="$p $(field "$j" error_percent) $(field "$j" seconds) $l"; fi
    done
    set -- $best
    printf '| %s | ReconStudio TV (ADMM), %s CG iterations, lambda %s x s | %.2f | %.2f | %.2f |\n' "$label" "$it" "$4" "$1" "$2" "$3"
done
for it in $pics_iterations; do
    best=""
    for l in $pics_lambdas; do
        t0=$(date +%s.%N)
        bart pics -S -R "T:3:0:$l" -i "$it" -t traj ksp_bart sens pics >/dev/null 2>&1
        dt=$(echo "$(date +%s.%N) - $t0" | bc)
        bart scale "$(echo "$(power "$n" "$dims / 2") / $C" | bc -l)" pics pics_model >/dev/null
        read -r p e < <(quality truth pics_model 0)
        if [[ -z $best ]] || (( $(echo "$p > ${best%% *}" | bc -l) )); then best="$p $e $dt $l"; fi
    done
    set -- $best
    printf '| %s | BART pics -R T:3:0:%s, %s iterations | %.2f | %.2f | %.2f |\n' "$label" "$4" "$it" "$1" "$2" "$3"
done
