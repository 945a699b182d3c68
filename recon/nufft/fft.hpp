// FFTW behind a small typed wrapper: one plan per (shape, direction), in place,
// multi-threaded. FFTW's planner is not thread-safe; plan creation is serialised.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <memory>

#include "recon/core/errors.hpp"

namespace recon {

enum class FftDirection { Forward /* exp(-i) */, Backward /* exp(+i), unnormalised */ };

template <class T>
class FftPlan {
public:
    // shape: sizes per axis, x fastest; dims 1..3 (trailing sizes 1 ignored).
    FftPlan(std::array<int, 3> shape, int dims, FftDirection dir);
    ~FftPlan();
    FftPlan(const FftPlan&) = delete;
    FftPlan& operator=(const FftPlan&) = delete;
    void execute(std::complex<T>* data) const;  // in place; any suitably aligned buffer of the plan's size
    // The same transform, cancellable: a large one (more than a few million points) runs as
    // batches of planes, then batches of lines along the slowest axis (the row-column
    // decomposition), polling progress's cancel between batches, so a 512^3 transform stops
    // within a fraction of a second (throws Cancelled). Without a cancel flag: execute().
    void execute(std::complex<T>* data, const Progress& progress) const;
    std::size_t size() const { return size_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::size_t size_ = 0;
};

// Number of threads the CPU backend uses (OpenMP's, or the user's choice).
int cpuThreads();
void setCpuThreads(int n);

}  // namespace recon
