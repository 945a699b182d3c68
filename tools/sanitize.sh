#!/usr/bin/env bash
# The engine and its CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer,
# then every reader's libFuzzer target for a bounded time on its seed corpus.
# Called by .ci/run after tools/test.sh; runnable alone. Needs clang-14 and
# libclang-rt-14-dev (tools/setup-debian.sh). Build folder: build-asan (clang,
# CUDA/VTK off; Qt where installed, for the GUI controller's stress test alone: the
# widgets are not built). Tests labelled `heavy` (too slow instrumented) and
# `fault-injection` (an LD_PRELOAD library, which ASan must precede) are left out.
#   FUZZ_SECONDS  seconds per fuzz target (default 45); 0 replays the corpora only.
# Any sanitizer report, failed test or fuzzer finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-45}
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
start=$(date +%s)

launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Sanitize "${launcher[@]}" \
  -DCMAKE_C_FLAGS_SANITIZE="-O1 -g1 $SANITIZE" -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1 $SANITIZE" \
  -DCMAKE_EXE_LINKER_FLAGS_SANITIZE="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS_SANITIZE="-fsanitize=address,undefined" \
  -DRECONSTUDIO_WITH_CUDA=OFF -DRECONSTUDIO_WITH_QT=AUTO -DRECONSTUDIO_WITH_VTK=OFF \
  -DRECONSTUDIO_BUILD_FUZZERS=ON
fuzzers=(fuzz_cfl_header fuzz_bart_dataset fuzz_hdf5_input fuzz_nifti_image)
# The controller under 1,000 random requests (worker thread, queued signals, cancels): its
# races and leaks are what ASan and LSan find. Built where Qt is.
gui=()
# (grep reads the whole list: with -q it could stop early and pipefail would see ninja's SIGPIPE)
if ninja -C build-asan -t targets all | grep '^test_controller_stress:' > /dev/null; then gui=(test_controller_stress); fi
# The multi-frame ISMRMRD files cli.frames reads come from a writer of the tests, built with ISMRMRD.
tools=()
if ninja -C build-asan -t targets all | grep '^write_ismrmrd_frames:' > /dev/null; then tools=(write_ismrmrd_frames); fi
cmake --build build-asan -j"$(nproc)" --target recon_tests recon_io_tests recon_ct_tests reconstudio-cli "${tools[@]}" "${fuzzers[@]}" "${gui[@]}"
built=$(date +%s)

export OMP_WAIT_POLICY=passive
# Leaks fail the run too; UBSan stops at its first report (-fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd build-asan && ctest -L cpu -LE "heavy|fault-injection|acceptance" -j2 --timeout 900 --output-on-failure)
if [ ${#gui[@]} -gt 0 ]; then
  (cd build-asan && ctest -R '^gui\.test_controller_stress$' --timeout 900 --output-on-failure)
else
  echo "sanitize.sh: Qt not installed: the controller's stress test is not run under ASan"
fi
tested=$(date +%s)

# Each fuzzer on a scratch copy of its seeds (new inputs never land in the tree).
# The HDF5 target's options: tests/fuzz/README.md.
for f in "${fuzzers[@]}"; do
  seeds=tests/fuzz/corpus/${f#fuzz_}
  scratch=$(mktemp -d)
  cp -r "$seeds"/. "$scratch"/
  options=""
  if [ "$f" = fuzz_hdf5_input ]; then options="detect_leaks=0:allocator_may_return_null=1"; fi
  echo "== $f: ${FUZZ_SECONDS}s on $(ls "$scratch" | wc -l) seeds"
  if ! ASAN_OPTIONS=$options build-asan/fuzz/$f -max_total_time="$FUZZ_SECONDS" -runs=$([ "$FUZZ_SECONDS" = 0 ] && echo 0 || echo -1) \
       -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$scratch/" "$scratch" > "$scratch.log" 2>&1; then
    tail -60 "$scratch.log"
    echo "FAIL: $f found a crash; the input is in $scratch (crash-*, timeout-*, oom-*)"
    exit 1
  fi
  grep -E "stat::number_of_executed_units|Done" "$scratch.log" | tail -2
  rm -rf "$scratch" "$scratch.log"
done
end=$(date +%s)
echo "sanitize.sh: build $((built - start)) s, tests $((tested - built)) s, fuzzing $((end - tested)) s, total $((end - start)) s"
