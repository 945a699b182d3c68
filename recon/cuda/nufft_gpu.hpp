// Non-uniform FFT on the GPU in the engine's conventions (the same math as the
// CPU's NufftPlan in recon/nufft/nufft.cpp): spreading with a SpreadKernel onto
// the sigma-oversampled grid, cuFFT, deapodisation by the kernel's transform
// (computed on the host by SpreadKernel::deapodization). Everything that depends
// only on the trajectory (each sample's first cell and offset, the sort of the
// samples by grid bin that keeps spreading atomics local) is done once, here.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>

#include "recon/core/types.hpp"
#include "recon/cuda/cuda_util.hpp"
#include "recon/cuda/fft_plan.hpp"
#include "recon/nufft/spread_kernel.hpp"

namespace recon::cuda {

// What a plan is for: the transforms (adjoint, forward), or only the raw spread and
// interpolation (density compensation), which then skips the cuFFT plan of the oversampled
// grid (its creation and workspace cost more than one spread and interpolation).
enum class NufftSteps { Transforms, SpreadInterpolate };

template <class T>
class GpuNufft {
public:
    using C = std::complex<T>;
    GpuNufft(const Trajectory& t, const SampleGrid& grid, const SpreadKernel& kernel, bool deapodize,
             cudaStream_t stream = nullptr, NufftSteps steps = NufftSteps::Transforms);

    // Device pointers throughout. out_j = sum_m c_m exp(+i 2 pi k_m . x_j), j over grid.points().
    // adjoint and forward need a Transforms plan (std::logic_error otherwise).
    void adjoint(const C* c, C* out);
    // out_m = sum_j f_j exp(-i 2 pi k_m . x_j).
    void forward(const C* f, C* out);
    // The raw steps on the oversampled grid (fineSize() points): Pipe-Menon uses them.
    void spread(const C* c, C* fine);
    void interpolate(const C* fine, C* c);

    std::size_t fineSize() const { return std::size_t(G_[0]) * G_[1] * G_[2]; }
    std::size_t samples() const { return M_; }
    const std::array<int, 3>& fineShape() const { return G_; }
    const SpreadKernel& kernel() const { return kernel_; }
    C* workspace() { return fine_.data(); }

private:
    SampleGrid grid_;
    SpreadKernel kernel_;
    bool deapodize_;
    int dims_;
    std::size_t M_;
    std::array<int, 3> G_{1, 1, 1};
    int W_ = 1;
    cudaStream_t stream_;
    DeviceBuffer<int> start_;             // 3 per sorted sample: first fine cell touched (unwrapped)
    DeviceBuffer<T> offset_;              // 3 per sorted sample: (first cell - position), in cells
    DeviceBuffer<std::uint32_t> order_;   // sorted position -> sample index
    DeviceBuffer<T> deapod_;              // S0 + S1 + S2 factors, one per output point per axis
    DeviceBuffer<C> fine_;
    std::unique_ptr<GpuFft<T>> fft_;  // null in a SpreadInterpolate plan
    const GpuFft<T>& fft() const;
};

}  // namespace recon::cuda
