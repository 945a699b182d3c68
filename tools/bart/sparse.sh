#!/usr/bin/env bash
# Sparse priors on one undersampled radial case made by BART: ours (`reconstudio-cli recon`: TV by ADMM,
# isotropic, anisotropic, and their sum 0.3 lambda isotropic + 0.7 lambda anisotropic (`--priors`), Haar
# wavelets by POGM, finite differences by CG, each at the best lambda of a sweep; TV and wavelets also at --lambda
# auto) against `bart pics` (-R T, ADMM; anisotropic TV as one -R T term per axis, -R T:1:0 -R T:2:0[ -R
# T:4:0], whose thresholds act on each difference alone; -R W with --wavelet haar, FISTA with -e; -l2),
# best lambda of a sweep each. PSNR and percent error against BART's truth (`bart phantom -x N`, -3 in 3D), and each
# best run's whole process timed by /usr/bin/time: wall seconds and CPU seconds (user + sys).
# Both sides: OMP_NUM_THREADS=2 (ours --threads 2), OMP_WAIT_POLICY=passive, the same machine, one run,
# interleaved (ours' TV sweeps, BART's T sweep, ours' wavelets, BART's W, fd, l2, then the refinements).
# Last, ours' best method at its best lambda is run to the first multiple of 10 steps whose PSNR reaches
# BART's best (read from its progress lines, then confirmed by a timed run): the time that takes.
#
# The sweep, the same rule on both sides: a coarse log grid (half decades by default), then, for every
# method whose coarse best is within --refine-within dB of its side's best coarse result or at its grid's
# edge, a climb from the coarse best in steps of --refine-step (1.25x): towards the better coarse
# neighbour first, on while PSNR rises, never past a coarse neighbour; the other way only where the first
# step did not improve.
# So neither side's best depends on where its grid's values happen to fall.
#
# Data: 2D golden-angle radial (`bart traj -r -G`) or the 3D kooshball (`bart traj -3 -r`), full spokes
# of N samples, `bart phantom -k -t` (+ `bart noise -s 1 -n VAR`). Units as in compare.sh: our data are
# BART's times N^d/C, pics' result is scaled by N^(d/2)/C (C = 4 sqrt(2)/pi^(3/2)); ours runs with
# --basis point (BART's phantom k-space is the transform of point samples).
#
# Prints Markdown rows | data | method | lambda | PSNR dB | error % | wall s | CPU s | and, last, one
# summary row: ours' best against BART's best, the PSNR difference and the time ratios. Every run of
# the sweeps is also appended to WORK/sweep.log (method lambda PSNR error wall CPU).
#
# The sum's split: the anisotropic part wins on BART's point-sampled phantom, whose edges are
# staircases along the axes; the isotropic part helped where noise dominates (docs/SPARSE.md).
# usage: sparse.sh [--dims 2|3] [--n N] [--spokes S] [--noise VAR] [--iterations OURS] [--pics-iterations B]
#                  [--lambdas "ours..."] [--pics-lambdas "bart..."] [--refine-step F] [--refine-within DB]
#                  [--methods "tv tva tvm wavelet fd T Ta W l2"] [--cli PATH] [--work DIR] [--header 0|1]
# --methods: run only these (ours: tv, tva anisotropic, tvm the sum, wavelet, fd; BART: T, Ta anisotropic, W, l2),
# for cases where BART's slow runs allow only its best method of an earlier full sweep.
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
dims=2 n=128 spokes=64 noise=0 header=1
ours_iterations=200 pics_iterations=1000 l2_iterations=100
# Ours: a sparse lambda is a threshold relative to an image of magnitude about 1 (docs/CONVENTIONS.md).
ours_lambdas="0.01 0.03 0.1 0.3 1"
# BART's: relative to its own scaling of the data (pics prints it). Both grids: half decades, 2 decades.
pics_lambdas="0.0003 0.001 0.003 0.01 0.03"
pics_l2_lambdas="0 0.001 0.01 0.1 0.3 1 3"
refine_step=1.25 refine_within=0.5
methods="tv tva tvm wavelet fd T Ta W l2"
cli=${RECONSTUDIO_CLI:-reconstudio-cli}
work=""
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
        --refine-step) refine_step=$2; shift 2 ;;
        --refine-within) refine_within=$2; shift 2 ;;
        --cli) cli=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --methods) methods=$2; shift 2 ;;
        --header) header=$2; shift 2 ;;
        *) echo "sparse.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $dims == 2 || $dims == 3 ]] || { echo "sparse.sh: --dims must be 2 or 3" >&2; exit 2; }
(( $(echo "$refine_step > 1" | bc -l) )) || { echo "sparse.sh: --refine-step must be above 1" >&2; exit 2; }
command -v bart >/dev/null || { echo "sparse.sh: bart is not installed (Debian package bart)" >&2; exit 2; }
cli=$(realpath "$(command -v "$cli")") || { echo "sparse.sh: no reconstudio-cli (--cli PATH or RECONSTUDIO_CLI)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
if [[ -z $work ]]; then work=$(mktemp -d); else mkdir -p "$work"; fi
cd "$work"
: > sweep.log
power() { echo "e($2 * l($1))" | bc -l; }  # bc's ^ takes integer exponents only
quality() {  # quality TRUTH IMAGE -> "psnr error%"
    local nt; nt=$(bart show -s $'\n' -f '%+.9e%+.9ei' "$1" | wc -l)
    { bart show -s $'\n' -f '%+.9e%+.9ei' "$1"; bart show -s $'\n' -f '%+.9e%+.9ei' "$2"; } |
        awk -v NT="$nt" -v RESCALE=0 -v DIGITS=4 -f "$here/quality.awk"  # 4: a refinement step can move 0.005 dB
}
field() { echo "$1" | sed "s/.*\"$2\":\([^,}]*\).*/\1/"; }  # field JSON_OBJECT NAME
timed() {  # timed CMD... -> runs it, leaves "wall cpu" in $times (CPU = user + sys)
    /usr/bin/time -f "%e %U %S" -o time.txt "$@" >/dev/null 2>run.err || { cat run.err >&2; return 1; }
    times=$(awk 'END { printf "%.2f %.2f", $1, $2 + $3 }' time.txt)
}
above() { (( $(echo "$1 > $2" | bc -l) )); }  # above A B: A > B (plain decimals: bc reads no exponents)
decimal() { printf %.10f "$(printf %.4g "$1")" | sed 's/0*$//; s/\.$//'; }  # 4 digits, never 1e-05

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

# --- one run of either side: "psnr error lambda wall cpu" -------------------------------------------------
mix_isotropic=0.3  # tvm: lambda = 0.3 lambda isotropic + 0.7 lambda anisotropic
prior() {  # prior METHOD LAMBDA: ours' options for one method of the sweep
    case $1 in
        tva) echo "--priors tv-anisotropic:$2" ;;
        tvm) echo "--priors tv:$(decimal "$(echo "$mix_isotropic * $2" | bc -l)"),tv-anisotropic:$(decimal "$(echo "(1 - $mix_isotropic) * $2" | bc -l)")" ;;
        *) echo "--regularizer $1 --lambda $2" ;;
    esac
}
ours() {  # ours METHOD LAMBDA ITERATIONS
    timed "$cli" recon --trajectory traj --kspace ksp_model --truth truth --basis point --only iterative \
        $(prior "$1" "$2") --iterations "$3" --threads 2 --quiet --output ours.cfl --report ours.json
    local j l=$2; j=$(cat ours.json)
    [[ $l != auto ]] || l=$(field "$j" lambda)
    echo "$(field "$j" psnr_db) $(field "$j" error_percent) $l $times"
}
first_steps() {  # first_steps METHOD LAMBDA PSNR MAX: the first multiple of 10 steps whose PSNR (progress lines) reaches PSNR
    "$cli" recon --trajectory traj --kspace ksp_model --truth truth --basis point --only iterative \
        $(prior "$1" "$2") --iterations "$4" --threads 2 --output ours.cfl 2>&1 >/dev/null |
        awk -v P="$3" 'match($0, /[0-9]+\/[0-9]+ .*PSNR +[0-9.]+ dB/) {
            split(substr($0, RSTART, RLENGTH), a, /[\/ ]+/); k = a[1]; p = $0; sub(/.*PSNR +/, "", p); sub(/ dB.*/, "", p)
            if (!found && p + 0.005 >= P) { print k; found = 1 } }'  # reads to the end: no SIGPIPE
}
pics() {  # pics LAMBDA ARGS...
    local l=$1; shift
    timed bart pics -S "$@" -t traj ksp_bart sens pics
    bart scale "$(echo "$(power "$n" "$dims / 2") / $C" | bc -l)" pics pics_model >/dev/null
    echo "$(quality truth pics_model) $l $times"
}
declare -A side=([tv]=ours [tva]=ours [tvm]=ours [wavelet]=ours [fd]=ours [T]=bart [Ta]=bart [W]=bart [l2]=bart)
# BART's TV thresholds the gradient's components jointly (isotropic); one term per axis is the anisotropic form.
axis_terms="-R T:1:0:LAMBDA -R T:2:0:LAMBDA"; [[ $dims == 2 ]] || axis_terms+=" -R T:4:0:LAMBDA"
declare -A name=(
    [tv]="ReconStudio TV (ADMM), $ours_iterations iterations"
    [tva]="ReconStudio anisotropic TV (ADMM), $ours_iterations iterations"
    [tvm]="ReconStudio TV 0.3 isotropic + 0.7 anisotropic (ADMM), $ours_iterations iterations"
    [wavelet]="ReconStudio Haar wavelets (POGM), $ours_iterations iterations"
    [fd]="ReconStudio finite differences (CG), 60 iterations"
    [T]="BART pics -R T:$flags:0:lambda (ADMM), $pics_iterations iterations"
    [Ta]="BART pics ${axis_terms//LAMBDA/lambda} (anisotropic TV by ADMM), $pics_iterations iterations"
    [W]="BART pics -R W:$flags:0:lambda --wavelet haar -e (FISTA), $pics_iterations iterations"
    [l2]="BART pics -l2 -r lambda, $l2_iterations iterations")
run() {  # run METHOD LAMBDA: one run of the sweep, logged
    local r
    case $1 in
        tv|tva|tvm|wavelet) r=$(ours "$1" "$2" "$ours_iterations") ;;
        fd) r=$(ours fd "$2" 60) ;;
        T) r=$(pics "$2" -R "T:$flags:0:$2" -i "$pics_iterations") ;;
        Ta) r=$(pics "$2" ${axis_terms//LAMBDA/$2} -i "$pics_iterations") ;;
        W) r=$(pics "$2" -R "W:$flags:0:$2" --wavelet haar -e -i "$pics_iterations") ;;
        l2) r=$(pics "$2" -l2 -r "$2" -i "$l2_iterations") ;;
    esac
    echo "$1 $2 $r" >> sweep.log
    echo "$r"
}

# --- the sweeps ---------------------------------------------------------------------------------------
want() { [[ " $methods " == *" $1 "* ]]; }
# The quadratic grid: pics' l2 grid in our units (lambda_ours = lambda_bart N^d / M, compare.sh).
fd_lambdas=""
for l in $pics_l2_lambdas; do
    fd_lambdas+=" $(echo "scale=12; $l * $(power "$n" "$dims") / ($n * $spokes)" | bc -l | sed 's/^\./0./')"
done
declare -A grid=([tv]=$ours_lambdas [tva]=$ours_lambdas [tvm]=$ours_lambdas [wavelet]=$ours_lambdas [fd]=$fd_lambdas
                 [T]=$pics_lambdas [Ta]=$pics_lambdas [W]=$pics_lambdas [l2]=$pics_l2_lambdas)
declare -A best coarse_psnr coarse_lambda refined capped  # best[m]: "psnr error lambda wall cpu" (lambda as given)
coarse() {  # coarse METHOD: its grid, its best in best[m]; every result in coarse_psnr["m l"]
    local m=$1 l r
    for l in ${grid[$m]}; do
        r=$(run "$m" "$l"); set -- $r
        coarse_psnr["$m $l"]=$1
        if [[ -z ${best[$m]:-} ]] || above "$1" "${best[$m]%% *}"; then best[$m]="$1 $2 $l $4 $5"; fi
    done
    set -- ${best[$m]}; coarse_lambda[$m]=$3
}
refine() {  # refine METHOD: climb from the coarse best in refine_step steps, between its coarse neighbours
    local m=$1 b=${coarse_lambda[$1]} lo="" hi="" l r first dir improved steps
    for l in ${grid[$m]}; do
        if above "$b" "$l"; then lo=$l; elif [[ -z $hi ]] && above "$l" "$b"; then hi=$l; fi
    done
    # Towards the better coarse neighbour first (upwards at the grid's low edge, downwards at its top).
    first=up
    if [[ -z $hi ]] || { [[ -n $lo ]] && above "${coarse_psnr["$m $lo"]}" "${coarse_psnr["$m $hi"]}"; }; then first=down; fi
    for dir in $first $([[ $first == up ]] && echo down || echo up); do
        l=$b improved=0 steps=0
        while (( steps++ < 10 )); do  # 10 steps: a factor 9 beyond a grid's edge at 1.25x
            if [[ $dir == up ]]; then l=$(decimal "$(echo "$l * $refine_step" | bc -l)")
            else l=$(decimal "$(echo "$l / $refine_step" | bc -l)"); fi
            if [[ $dir == up && -n $hi ]] && ! above "$hi" "$l"; then break; fi
            if [[ $dir == down && -n $lo ]] && ! above "$l" "$lo"; then break; fi
            r=$(run "$m" "$l"); set -- $r
            if above "$1" "${best[$m]%% *}"; then best[$m]="$1 $2 $l $4 $5" improved=1; else break; fi
            (( steps < 10 )) || capped[$m]=1  # still rising after the last step allowed
        done
        [[ $improved == 0 ]] || break  # a unimodal curve falls the other way
    done
    refined[$m]=1
}
for m in tv T tva Ta tvm wavelet W fd l2; do if want "$m"; then coarse "$m"; fi; done
for s in ours bart; do  # refine the methods within refine_within dB of their side's best coarse result
    top=""
    for m in tv tva tvm wavelet fd T Ta W l2; do
        if [[ ${side[$m]} != "$s" ]] || ! want "$m"; then continue; fi
        if [[ -z $top ]] || above "${best[$m]%% *}" "$top"; then top=${best[$m]%% *}; fi
    done
    declare "top_$s=$top"
done
for m in tv T tva Ta tvm wavelet W fd l2; do
    want "$m" || continue
    top=$(eval echo "\$top_${side[$m]}"); read -ra g <<< "${grid[$m]}"
    [[ ${coarse_lambda[$m]} != 0 ]] || continue
    # A best at a grid's edge is climbed too: how far its curve rises beyond the edge is unknown.
    if ! above "$(echo "$top - $refine_within" | bc -l)" "${best[$m]%% *}" ||
        [[ ${coarse_lambda[$m]} == "${g[0]}" || ${coarse_lambda[$m]} == "${g[-1]}" ]]; then refine "$m"; fi
done

# --- rows ---------------------------------------------------------------------------------------------
row() { printf '| %s | %s | %s | %.2f | %.2f | %s | %s |\n' "$label" "$1" "$2" "$3" "$4" "$5" "$6"; }
consider() {  # consider SIDE PSNR ERROR WALL CPU NAME: a tie at the table's 0.01 dB keeps the earlier, cheaper run
    local s=$1; shift
    local cur; cur=$(eval echo "\${best_$s:-}")
    if [[ -z $cur ]] || above "$(printf %.2f "$1")" "$(printf %.2f "${cur%% *}")"; then eval "best_$s=\"\$*\""; fi
}
how() {  # how METHOD: the sweep's note for the lambda column
    local m=$1 l; set -- ${grid[$m]}
    if [[ -z ${refined[$m]:-} ]]; then
        l=${coarse_lambda[$m]}
        if [[ $l == "$1" || $l == "${!#}" ]]; then echo " (coarse grid only, its edge)"; else echo " (coarse grid only)"; fi
    else
        l=$(echo "${best[$m]}" | cut -d' ' -f3)
        [[ $l == "${coarse_lambda[$m]}" ]] || echo " (coarse grid: ${coarse_lambda[$m]}$([[ -z ${capped[$m]:-} ]] || echo "; the climb's last step, still rising"))"
    fi
}
if [[ $header == 1 ]]; then
    printf '| data | method | lambda | PSNR dB | error %% | wall s | CPU s |\n|---|---|---|---|---|---|---|\n'
fi
fast_m="" fast_p=""  # ours' sparse method with the best sweep result: the one timed to BART's PSNR below
for m in tv tva tvm wavelet fd; do
    want "$m" || continue
    set -- ${best[$m]}
    row "${name[$m]}, best of sweep" "$(printf %.3g "$3") x s$(how "$m")" "$1" "$2" "$4" "$5"
    consider ours "$1" "$2" "$4" "$5" "${name[$m]%%,*}"
    if [[ $m != fd ]] && { [[ -z $fast_m ]] || above "$1" "$fast_p"; }; then fast_m=$m fast_p=$1 fast_l=$3; fi
    if [[ $m != fd ]]; then
        # The best lambda again with three times the iterations: how far the sweep's solves were from converged.
        set -- $(ours "$m" "$3" $((3 * ours_iterations)))
        row "${name[$m]%%,*}, $((3 * ours_iterations)) iterations, the sweep's best lambda" "$(printf %.3g "$3") x s" "$1" "$2" "$4" "$5"
        consider ours "$1" "$2" "$4" "$5" "${name[$m]%%,*}, $((3 * ours_iterations)) iterations"
        if [[ $m == tv || $m == wavelet ]]; then
            set -- $(ours "$m" auto "$ours_iterations")
            row "${name[$m]}, lambda auto" "$(printf %.3g "$3") x s" "$1" "$2" "$4" "$5"
        fi
    fi
done
for m in T Ta W l2; do
    want "$m" || continue
    set -- ${best[$m]}
    row "${name[$m]}, best of sweep" "$3$(how "$m")" "$1" "$2" "$4" "$5"
    consider bart "$1" "$2" "$4" "$5" "${name[$m]%%,*}"
done

# --- ours' best against BART's best -------------------------------------------------------------------
set -- $best_ours; po=$1 wo=$3 co=$4; shift 4; no="$*"
set -- $best_bart; pb=$1 wb=$3 cb=$4; shift 4; nb="$*"
printf '| %s | **best: %s vs %s** | | %+.2f dB | | %.3f x | %.3f x |\n' "$label" "$no" "$nb" \
    "$(echo "$po - $pb" | bc -l)" "$(echo "$wo / $wb" | bc -l)" "$(echo "$co / $cb" | bc -l)"

# --- the fewest steps of ours' best method that reach BART's best PSNR, and their time ------------------
max_steps=$((3 * ours_iterations))
k=$(first_steps "$fast_m" "$fast_l" "$pb" "$max_steps")
if [[ -z $k ]]; then
    printf '| %s | %s at the sweep'"'"'s best lambda: BART'"'"'s best (%.2f dB) not reached in %d steps | %s x s | | | | |\n' \
        "$label" "${name[$fast_m]%%,*}" "$pb" "$max_steps" "$(printf %.3g "$fast_l")"
else
    while :; do  # the progress lines round to 0.01 dB: confirm, 10 steps more where the run falls short
        set -- $(ours "$fast_m" "$fast_l" "$k")
        if ! above "$pb" "$1" || (( k + 10 > max_steps )); then break; fi
        k=$((k + 10))
    done
    row "${name[$fast_m]%%,*}, $k iterations: the first multiple of 10 that reaches BART's best" "$(printf %.3g "$3") x s" "$1" "$2" "$4" "$5"
    printf '| %s | **to BART'"'"'s PSNR: %s, %d iterations, vs %s** | | %+.2f dB | | %.3f x | %.3f x |\n' "$label" \
        "${name[$fast_m]%%,*}" "$k" "$nb" "$(echo "$1 - $pb" | bc -l)" "$(echo "$4 / $wb" | bc -l)" "$(echo "$5 / $cb" | bc -l)"
fi
