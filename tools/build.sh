#!/usr/bin/env bash
# Configures and builds ReconStudio in ./build (Release, Ninja). Extra arguments go to CMake.
set -euo pipefail
cd "$(dirname "$0")/.."
# A compiler cache, where one is installed, makes rebuilds of a fresh clone cheap.
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@"
cmake --build build -j"$(nproc)"
