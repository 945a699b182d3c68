#include "recon/cuda/fft_plan.hpp"

#include <cufft.h>

#include <string>
#include <type_traits>

#include "recon/core/errors.hpp"
#include "recon/cuda/cuda_util.hpp"

namespace recon::cuda {
namespace {

void checkFft(cufftResult r, const char* what, std::size_t bytes) {
    if (r == CUFFT_SUCCESS) return;
    if (r == CUFFT_ALLOC_FAILED) throw OutOfMemory(std::string("cuFFT ") + what, bytes);
    throw Error(std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what);
}

template <class T>
void execC2C(int handle, std::complex<T>* data, int direction) {
    if constexpr (std::is_same<T, float>::value) {
        auto* p = reinterpret_cast<cufftComplex*>(data);
        checkFft(cufftExecC2C(cufftHandle(handle), p, p, direction), "FFT", 0);
    } else {
        auto* p = reinterpret_cast<cufftDoubleComplex*>(data);
        checkFft(cufftExecZ2Z(cufftHandle(handle), p, p, direction), "FFT", 0);
    }
}

}  // namespace

template <class T>
GpuFft<T>::GpuFft(std::array<int, 3> shape, int dims, cudaStream_t stream) {
    size_ = std::size_t(shape[0]) * shape[1] * shape[2];
    const cufftType type = std::is_same<T, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    cufftHandle h = 0;
    // cuFFT's dimensions are slowest first; ours are x fastest.
    const std::size_t work = size_ * sizeof(std::complex<T>);
    if (dims == 3)
        checkFft(cufftPlan3d(&h, shape[2], shape[1], shape[0], type), "3D plan", work);
    else if (dims == 2)
        checkFft(cufftPlan2d(&h, shape[1], shape[0], type), "2D plan", work);
    else
        checkFft(cufftPlan1d(&h, shape[0], type, 1), "1D plan", work);
    handle_ = int(h);
    checkFft(cufftSetStream(h, stream), "set stream", 0);
}

template <class T>
GpuFft<T>::~GpuFft() {
    cufftDestroy(cufftHandle(handle_));
}

template <class T>
void GpuFft<T>::forward(std::complex<T>* data) const {
    if constexpr (std::is_same<T, float>::value) {
        auto* p = reinterpret_cast<cufftComplex*>(data);
        checkFft(cufftExecC2C(cufftHandle(handle_), p, p, CUFFT_FORWARD), "forward FFT", 0);
    } else {
        auto* p = reinterpret_cast<cufftDoubleComplex*>(data);
        checkFft(cufftExecZ2Z(cufftHandle(handle_), p, p, CUFFT_FORWARD), "forward FFT", 0);
    }
}

template <class T>
void GpuFft<T>::inverse(std::complex<T>* data) const {
    if constexpr (std::is_same<T, float>::value) {
        auto* p = reinterpret_cast<cufftComplex*>(data);
        checkFft(cufftExecC2C(cufftHandle(handle_), p, p, CUFFT_INVERSE), "inverse FFT", 0);
    } else {
        auto* p = reinterpret_cast<cufftDoubleComplex*>(data);
        checkFft(cufftExecZ2Z(cufftHandle(handle_), p, p, CUFFT_INVERSE), "inverse FFT", 0);
    }
}

template <class T>
PaddedFft<T>::PaddedFft(std::array<int, 3> big, int dims, cudaStream_t stream) {
    if (dims < 2) throw Error("PaddedFft needs a 2D or 3D grid");
    const cufftType type = std::is_same<T, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    const int slow = big[dims - 1];
    long long slice = 1;
    for (int a = 0; a < dims - 1; ++a) slice *= big[a];
    const std::size_t bytes = std::size_t(slice) * slow * sizeof(std::complex<T>);
    // Inner: the faster axes (slowest first, as cuFFT wants), batched over the first half of the slices.
    long long n2[2] = {big[1], big[0]};
    long long n1[1] = {big[0]};
    cufftHandle h = 0;
    std::size_t work = 0;
    checkFft(cufftCreate(&h), "plan", bytes);
    if (dims == 3)
        checkFft(cufftMakePlanMany64(h, 2, n2, nullptr, 1, slice, nullptr, 1, slice, type, slow / 2, &work), "inner plan",
                 bytes);
    else
        checkFft(cufftMakePlanMany64(h, 1, n1, nullptr, 1, slice, nullptr, 1, slice, type, slow / 2, &work), "inner plan",
                 bytes);
    checkFft(cufftSetStream(h, stream), "set stream", 0);
    inner_ = int(h);
    // Outer: 1D along the slowest axis for every point of a slice (stride = slice).
    long long ns[1] = {slow};
    checkFft(cufftCreate(&h), "plan", bytes);
    checkFft(cufftMakePlanMany64(h, 1, ns, ns, slice, 1, ns, slice, 1, type, slice, &work), "outer plan", bytes);
    checkFft(cufftSetStream(h, stream), "set stream", 0);
    outer_ = int(h);
}

template <class T>
PaddedFft<T>::~PaddedFft() {
    cufftDestroy(cufftHandle(inner_));
    cufftDestroy(cufftHandle(outer_));
}

template <class T>
void PaddedFft<T>::forward(std::complex<T>* data) const {
    execC2C<T>(inner_, data, CUFFT_FORWARD);
    execC2C<T>(outer_, data, CUFFT_FORWARD);
}

template <class T>
void PaddedFft<T>::inverse(std::complex<T>* data) const {
    execC2C<T>(outer_, data, CUFFT_INVERSE);
    execC2C<T>(inner_, data, CUFFT_INVERSE);
}

template class GpuFft<float>;
template class GpuFft<double>;
template class PaddedFft<float>;
template class PaddedFft<double>;

}  // namespace recon::cuda
