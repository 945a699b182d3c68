#!/bin/bash
# Time to quality of the CT solvers on the GPU machine (docs/CT_PROJECTOR.md, "Iterative
# reconstructions"): builds ct_solver_bench with CUDA and runs FDK, CG (fd, TV) and OS-SART on
# the demo cases on the CUDA backend. Run from the repository root with FFTW's .deb files in
# .debs/; results in $OUT (default ./out). A first argument 'quick' runs fewer λ values.
set -u -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build-solvers
source "$(dirname "${BASH_SOURCE[0]}")/../cuda/unpack_debs.sh"  # FFTW, OpenBLAS
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DRECONSTUDIO_WITH_QT=OFF -DRECONSTUDIO_WITH_HDF5=OFF \
      -DRECONSTUDIO_WITH_CUDA=ON $DEBS_CMAKE_ARGS > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
SECONDS=0
cmake --build $B -j16 --target ct_solver_bench > "$OUT/build.log" 2>&1 || { grep -E "error" -A5 "$OUT/build.log" | head -40; exit 1; }
echo "build ok (${SECONDS} s)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/device.txt"
BENCH="$B/tests/recon/ct/ct_solver_bench --backend cuda"
TV="cg:tv:auto cg:tv:5e-5 cg:tv:1e-4 cg:tv:2e-4 cg:tv:4e-4 cg:tv:8e-4"
{
  $BENCH --case ct-2d-sparse --iterations 150 --every 10 fdk cg:fd:0.1 os-sart:10 os-sart:20 cg:tv:1e-5 cg:tv:3e-5 $TV
  for ph in 500 2000 10000; do
    $BENCH --case ct-2d-lowdose --photons $ph --iterations 150 --every 10 fdk cg:fd:0.03 os-sart:10 $TV cg:tv:1.6e-3
  done
  $BENCH --case ct-3d --iterations 60 --every 10 fdk cg:fd:0.1 os-sart:10 cg:tv:2e-4
} 2>&1 | tee "$OUT/solvers.txt" | grep -E "photons|fdk|iteration (10|30|60|150)$" | cut -c1-80
