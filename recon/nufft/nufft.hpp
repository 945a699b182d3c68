// Non-uniform FFT on the CPU: spreading onto an oversampled grid with a
// SpreadKernel, FFTW, deapodisation. Type 1 (adjoint) and type 2 (forward) in
// the engine's sign conventions; the same spreading serves gridding and the
// Pipe-Menon density compensation. Everything that depends only on the
// trajectory (per-sample cells, the slab buckets) is computed once per plan.
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"
#include "recon/nufft/cropped_fft.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/spread_kernel.hpp"

namespace recon {

template <class T>
class NufftPlan {
public:
    using C = std::complex<T>;
    NufftPlan(const Trajectory& t, const SampleGrid& grid, const SpreadKernel& kernel, bool deapodize = true);

    // out_j = sum_m c_m exp(+i 2 pi k_m . x_j), j over grid.points().
    void adjoint(const C* c, C* out, const Progress& progress = {}) const;
    // out_m = sum_j f_j exp(-i 2 pi k_m . x_j).
    void forward(const C* f, C* out, const Progress& progress = {}) const;

    // The raw steps on the oversampled grid (fineSize() points), for density compensation.
    // Both poll progress's cancel as they go (every slab bucket, every block of samples)
    // and throw Cancelled, leaving the output unspecified.
    void spread(const C* c, C* fine, const Progress& progress = {}) const;
    // Real values spread onto a real fine grid (Q's weights |phi|^2).
    void spread(const T* c, T* fine, const Progress& progress = {}) const;
    void interpolate(const C* fine, C* c, const Progress& progress = {}) const;
    // Keeps every sample's kernel weights (dims x W doubles per sample) so that later spreads and
    // interpolations look them up instead of evaluating the kernel: Pipe-Menon's repeated passes,
    // where the Kaiser-Bessel kernel's Bessel function was most of the time (docs/SCALING.md).
    void keepKernelWeights();
    std::size_t fineSize() const { return std::size_t(G_[0]) * G_[1] * G_[2]; }
    std::array<int, 3> fineShape() const { return G_; }
    const SpreadKernel& kernel() const { return kernel_; }

private:
    template <class F>
    void forEachWeight(std::size_t m, F&& f) const;
    template <class V>
    void spreadValues(const V* c, V* fine, const Progress& progress) const;

    SampleGrid grid_;
    SpreadKernel kernel_;
    bool deapodize_;
    int dims_;
    std::size_t M_;
    std::array<int, 3> G_{1, 1, 1};
    std::array<int, 3> W_{1, 1, 1};
    std::vector<double> pos_;         // 3 per sample: position in fine cells, in [0, G)
    std::vector<int> start_;          // 3 per sample: first cell touched (may be negative)
    std::vector<double> weights_;     // keepKernelWeights: 3 W_max per sample, else empty
    int weights_stride_ = 0;          // W_max
    std::vector<std::vector<std::uint32_t>> bucket_;  // samples by start cell (mod G) on the slow axis
    std::array<std::vector<double>, 3> deapod_;
    // Made on first use: a measured plan costs up to seconds the first time a machine sees a
    // size, and most plans run in one direction only (Q, F^H d, gridding). Not thread-safe,
    // like the plan's other uses. The adjoint's transform is pruned to the output grid.
    const FftPlan<T>& forwardFft() const;
    const CroppedFft<T>& adjointFft() const;
    mutable std::unique_ptr<FftPlan<T>> fwd_;
    mutable std::unique_ptr<CroppedFft<T>> adj_;
};

}  // namespace recon
