#!/bin/bash
# The GPU machine's whole check in one script (docs/GPU.md): build the engine with
# CUDA, run the gpu-labelled tests, compute-sanitizer (memcheck, racecheck) and the
# benchmark. Run from the repository root with FFTW's and OpenBLAS's .deb files carried in .debs/ (unpack_debs.sh).
#   tests/recon/cuda/run_on_device.sh [build|build-ct|build-multi|build-sense] [test] [sanitize] [bench] [bench-all] [whole]
#                                     [ct-bench] [ct-gpu] [ct-peers] [multi-test] [multi-bench] [sense-bench]
# build-multi builds only what multi-test and multi-bench need, on every core; build-sense what sense-bench needs.
# build-ct builds only the CT projector's targets (ct_dd_bench, recon_cuda_tests); ct-gpu runs
# the CT benchmark without the CPU's timed runs, then the CT tests and memcheck on them.
# multi-test and multi-bench: the split over several devices (docs/GPU.md, "Several GPUs").
# build-sense builds recon_cuda_tests and sense_bench (BUILD_TARGETS=... is overridden by it); sense-bench breaks one
# SENSE reconstruction and the coil maps down stage by stage (docs/SENSE.md, "Speed").
# Logs and results go to $OUT (default ./out).
set -u -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
stages="${*:-build test sanitize bench}"
has() { [[ " $stages " == *" $1 "* ]]; }
B=build-dev
T=$B/tests/recon/cuda/recon_cuda_tests
CLI=$B/app/cli/reconstudio-cli

source "$(dirname "${BASH_SOURCE[0]}")/unpack_debs.sh"  # FFTW, OpenBLAS
export RECONSTUDIO_TUNE_CACHE=$PWD/$B/cuda-tune.txt

targets="${BUILD_TARGETS:-recon_cuda_tests reconstudio-cli ct_dd_bench multi_gpu_bench}"  # BUILD_TARGETS: fewer, faster
jobs=16
has build-ct && targets="recon_cuda_tests ct_dd_bench"
has build-multi && targets="recon_cuda_tests multi_gpu_bench reconstudio-cli" && jobs=$(nproc)
has build-sense && targets="recon_cuda_tests sense_bench"
if has build || has build-ct || has build-multi || has build-sense; then
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,memory.total,driver_version --format=csv | tee "$OUT/device.txt"
  nvcc --version | tail -2 | tee -a "$OUT/device.txt"
  cmake -S . -B $B -G Ninja -DRECONSTUDIO_WITH_QT=OFF -DRECONSTUDIO_WITH_HDF5=OFF -DRECONSTUDIO_WITH_CUDA=ON \
        $DEBS_CMAKE_ARGS > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  cmake --build $B -j$jobs --target $targets 2>&1 | tail -n 400 > "$OUT/build.log" \
    || { grep -E "error|Error" -A5 "$OUT/build.log" | head -60; exit 1; }
  for o in $B/recon/CMakeFiles/recon.dir/cuda/*.cu.o; do
    cuobjdump --dump-resource-usage "$o" 2>/dev/null | grep -E "Function|REG" | paste - - | \
      sed -E 's/.*Function ([^ :]*).*REG:([0-9]+).*SHARED:([0-9]+).*LOCAL:([0-9]+).*/\2 regs \3 smem \4 local  \1/'
  done | sort -u > "$OUT/resources.txt"
  echo "build ok"
fi

if has test; then
  # One run fills GPU.Tune's cache so the parallel tests do not all search at once.
  $T --gtest_filter='AllMethods/CudaSums.AdjointMatchesFloat64Sum/3d_odd_tune_f*' > "$OUT/tune-warmup.log" 2>&1
  ctest --test-dir $B -L gpu -j8 --output-on-failure --timeout 300 > "$OUT/ctest.log" 2>&1
  grep -E "tests passed|tests failed|Total Test time" "$OUT/ctest.log"
  grep -E "\(Failed\)|\(Timeout\)|\(SEGFAULT\)|Exception" "$OUT/ctest.log" | head -20
fi

if has sanitize; then
  MEM='CudaCtDd.*:CudaPreconditioner.*:CudaLinop.*:CudaOutOfMemory.*:GpuPriors.*:CudaSense.*:AllMethods/CudaSums.*/3d_odd*:AllMethods/CudaSums.*/2d_odd_nufft*:CudaToeplitz.MatchesNormalOperator2D:CudaToeplitzPaths.AgreeWithTheNormalOperator*:CudaSolver.*:CudaGridding.*:CudaSums.VoxelRanges*:CudaSplit.*'
  RACE='CudaCtDd.*:AllMethods/CudaSums.*/2d_odd_exact_fast_f32:AllMethods/CudaSums.*/2d_odd_tune_f32:AllMethods/CudaSums.*/2d_odd_fasttrig_f32:AllMethods/CudaSums.*/2d_odd_nufft_f32:CudaSolver.FollowsTheCpuSolverFloat32:CudaToeplitzPaths.AgreeWithTheNormalOperator3D'
  compute-sanitizer --tool memcheck --leak-check full $T --gtest_filter="$MEM" > "$OUT/memcheck.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED" "$OUT/memcheck.log" | sort | uniq -c
  compute-sanitizer --tool racecheck --racecheck-report all $T --gtest_filter="$RACE" > "$OUT/racecheck.log" 2>&1
  echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck.log" | sort | uniq -c
fi

if has bench; then
  $CLI benchmark --sizes 128 --json "$OUT/bench128.json" 2>"$OUT/bench128.err" | tee "$OUT/bench128.txt"
fi
if has whole; then
  # Where the whole advanced reconstruction's time goes, stage by stage (issue 17; docs/GPU.md).
  $CLI benchmark --sizes 128 --no-cpu --whole 1e-4 --json "$OUT/whole.json" 2>"$OUT/whole.err" | tee "$OUT/whole.txt"
fi
if has bench-all; then
  $CLI benchmark --sizes 64,256 --no-cpu --json "$OUT/bench-sizes.json" 2>"$OUT/bench-sizes.err" | tee "$OUT/bench-sizes.txt"
fi
if has ct-bench; then
  # The branchless CT projector's rows (issue 18): 256^3/360 views and 512^3/720 views.
  $B/tests/recon/cuda/ct_dd_bench --sizes 256 --cpu-views 4 2>&1 | tee "$OUT/ct-bench.txt"
  $B/tests/recon/cuda/ct_dd_bench --sizes 512 --cpu-views 2 2>&1 | tee -a "$OUT/ct-bench.txt"
fi
if has ct-gpu; then
  $B/tests/recon/cuda/ct_dd_bench --sizes 512 --cpu-views 1 --no-cpu-timing 2>&1 | tee "$OUT/ct-gpu.txt"
  $B/tests/recon/cuda/ct_dd_bench --sizes 256 --cpu-views 2 --no-cpu-timing 2>&1 | tee -a "$OUT/ct-gpu.txt"
  $T --gtest_filter='CudaCt*' > "$OUT/ct-tests.log" 2>&1; grep -E "PASSED|FAILED|OK \]|SKIPPED" "$OUT/ct-tests.log"
  compute-sanitizer --tool memcheck --leak-check full $T --gtest_filter='CudaCtDd.*' > "$OUT/ct-memcheck.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED" "$OUT/ct-memcheck.log" | sort | uniq -c
fi
if has multi-test; then
  # Issue 20's split over devices alone: its tests, then memcheck of those without the session solve
  # (logical devices on one GPU where only one exists).
  $T --gtest_filter='CudaSplit.*' > "$OUT/multi-test.log" 2>&1
  echo "multi-test exit $?"; grep -E "^\[  (PASSED|FAILED) |^\[ +(OK|FAILED) +\]" "$OUT/multi-test.log"
  compute-sanitizer --tool memcheck --leak-check full $T --gtest_filter='CudaSplit.*-CudaSplit.Session*' \
    > "$OUT/multi-memcheck.log" 2>&1
  echo "multi memcheck exit $?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED" "$OUT/multi-memcheck.log" | sort | uniq -c
fi
if has multi-bench; then
  # SENSE 8 and 32 coils at 128^3 and GPU.Multi on 1..4 devices: every GPU when there are several,
  # else four logical devices of GPU 0 (docs/GPU.md, "Several GPUs"). MULTI_BENCH_256=1 adds the
  # 256^3 rows (8 and 32 coils; MULTI_BENCH_256=only: those alone, for a second call).
  if [ "${MULTI_BENCH_256:-}" != only ]; then
    $B/tests/recon/cuda/multi_gpu_bench --sizes 128 --coils 8,32 2>"$OUT/multi-bench.err" | tee "$OUT/multi-bench.txt"
  fi
  if [ -n "${MULTI_BENCH_256:-}" ]; then
    $B/tests/recon/cuda/multi_gpu_bench --sizes 256 --coils 8,32 --no-multi 2>>"$OUT/multi-bench.err" | tee -a "$OUT/multi-bench.txt"
  fi
fi
if has sense-bench; then
  # Where one SENSE reconstruction's time goes (issue 14; docs/SENSE.md "Speed"): 128^3, 8 coils.
  $B/tests/recon/cuda/sense_bench --size 128 --coils 8 --repeats 2 2>"$OUT/sense-bench.err" | tee "$OUT/sense-bench.txt"
fi
if has ct-peers; then
  # ASTRA's CGLS and SIRT on our scans (issue 18; tools/ct/astra_iterative.py): its wheels carried in
  # .whl, cuFFT replaced by the stand-in, the scans as .npz in ${CT_PEERS_DATA:-ct-peers-data}.
  rm -rf /tmp/astra && mkdir -p /tmp/astra/nvidia/cufft/lib
  for w in .whl/astra_toolbox-2.5.0-*.whl .whl/nvidia_cuda_runtime_cu12-*.whl; do
    python3 -m zipfile -e "$w" /tmp/astra || exit 1  # no unzip there; a wheel is a zip
  done
  gcc -shared -fPIC -Wl,-soname,libcufft.so.11 -Wl,--version-script=tools/ct/cufft_standin.map \
      -o /tmp/astra/nvidia/cufft/lib/libcufft.so.11 tools/ct/cufft_standin.c
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/ct-peers.txt"
  PYTHONPATH=/tmp/astra python3 tools/ct/astra_iterative.py astra ${CT_PEERS_DATA:-ct-peers-data}/*.npz \
      --json "$OUT/astra-iterative.json" 2>&1 | tee -a "$OUT/ct-peers.txt"
fi
