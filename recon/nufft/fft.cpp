#include "recon/core/errors.hpp"
#include "recon/nufft/fft.hpp"

#include <fftw3.h>
#include <omp.h>

#include <mutex>
#include <stdexcept>
#include <vector>

namespace recon {
namespace {

std::mutex& plannerMutex() {
    static std::mutex m;
    return m;
}

int g_threads = 0;

void initThreadsOnce() {
    static std::once_flag once;
    std::call_once(once, [] {
        fftw_init_threads();
        fftwf_init_threads();
    });
}

}  // namespace

int cpuThreads() { return g_threads > 0 ? g_threads : omp_get_max_threads(); }
void setCpuThreads(int n) {
    g_threads = n;
    if (n > 0) omp_set_num_threads(n);
}

template <class T>
struct FftTraits;
template <>
struct FftTraits<double> {
    using plan = fftw_plan;
    using cpx = fftw_complex;
};
template <>
struct FftTraits<float> {
    using plan = fftwf_plan;
    using cpx = fftwf_complex;
};

template <class T>
struct FftPlan<T>::Impl {
    typename FftTraits<T>::plan plan = nullptr;
};

template <class T>
FftPlan<T>::FftPlan(std::array<int, 3> shape, int dims, FftDirection dir) : impl_(new Impl) {
    initThreadsOnce();
    std::vector<int> n;  // FFTW wants slowest axis first
    for (int a = dims - 1; a >= 0; --a) n.push_back(shape[a]);
    size_ = 1;
    for (int a = 0; a < dims; ++a) size_ *= std::size_t(shape[a]);
    int sign = dir == FftDirection::Forward ? FFTW_FORWARD : FFTW_BACKWARD;
    std::lock_guard<std::mutex> lock(plannerMutex());
    // FFTW_ESTIMATE never touches the buffer, so a scratch buffer is only a template for alignment.
    if constexpr (std::is_same_v<T, double>) {
        fftw_plan_with_nthreads(cpuThreads());
        auto* buf = fftw_alloc_complex(size_);
        impl_->plan = fftw_plan_dft(int(n.size()), n.data(), buf, buf, sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
        fftw_free(buf);
    } else {
        fftwf_plan_with_nthreads(cpuThreads());
        auto* buf = fftwf_alloc_complex(size_);
        impl_->plan = fftwf_plan_dft(int(n.size()), n.data(), buf, buf, sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
        fftwf_free(buf);
    }
    if (!impl_->plan) throw Error("FFTW could not plan a transform");
}

template <class T>
FftPlan<T>::~FftPlan() {
    std::lock_guard<std::mutex> lock(plannerMutex());
    if constexpr (std::is_same_v<T, double>)
        fftw_destroy_plan(impl_->plan);
    else
        fftwf_destroy_plan(impl_->plan);
}

template <class T>
void FftPlan<T>::execute(std::complex<T>* data) const {
    using C = typename FftTraits<T>::cpx;
    auto* p = reinterpret_cast<C*>(data);
    if constexpr (std::is_same_v<T, double>)
        fftw_execute_dft(impl_->plan, p, p);
    else
        fftwf_execute_dft(impl_->plan, p, p);
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace recon
