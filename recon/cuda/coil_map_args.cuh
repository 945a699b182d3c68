// SENSE's coil maps handed to a kernel by value: a chunk's device pointers (at most
// kMaxCoilBatch) in the launch's parameters, no device array of pointers to keep in step.
// Shared by the Toeplitz pad/crop kernels (linalg.cu) and the line transforms (fft_plan.cu).
#pragma once

#include <string>

#include "recon/core/errors.hpp"
#include "recon/cuda/device_math.cuh"
#include "recon/cuda/linalg.hpp"

namespace recon::cuda {

template <class V>
struct CoilMapArgs {
    const V* map[kMaxCoilBatch];
};

// maps.map[coil] through constant indices only: with a run-time index into the parameter array
// the batched product ran slower than coil by coil (5.3 against 3.4 ms for 8 coils at 128^3;
// docs/SENSE.md).
template <class V>
__device__ inline const V* coilMap(const CoilMapArgs<V>& maps, int coil) {
    const V* map = maps.map[0];
#pragma unroll
    for (int c = 1; c < kMaxCoilBatch; ++c)
        if (c == coil) map = maps.map[c];
    return map;
}

// The arguments for `coils` maps (1..kMaxCoilBatch; `maps` null: none, the identity).
template <class T>
CoilMapArgs<cx_t<T>> coilMapArgs(int coils, const std::complex<T>* const* maps, const char* what) {
    if (coils < 1 || coils > kMaxCoilBatch)
        throw Error(std::string(what) + " takes 1.." + std::to_string(kMaxCoilBatch) + " coils, not " + std::to_string(coils));
    CoilMapArgs<cx_t<T>> a{};
    if (maps)
        for (int c = 0; c < coils; ++c) a.map[c] = dev(maps[c]);
    return a;
}

}  // namespace recon::cuda
