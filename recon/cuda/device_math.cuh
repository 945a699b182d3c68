// Device-side helpers shared by the CUDA translation units: complex types and
// arithmetic, the two sin/cos flavours, reductions.
#pragma once

#include <cuda_runtime.h>

#include <complex>

namespace recon::cuda {

template <class T>
struct Cx;
template <>
struct Cx<float> {
    using type = float2;
};
template <>
struct Cx<double> {
    using type = double2;
};
template <class T>
using cx_t = typename Cx<T>::type;

// The host's complex arrays as the device's vector types (same layout: two T, real first).
template <class T>
cx_t<T>* dev(std::complex<T>* p) {
    return reinterpret_cast<cx_t<T>*>(p);
}
template <class T>
const cx_t<T>* dev(const std::complex<T>* p) {
    return reinterpret_cast<const cx_t<T>*>(p);
}

template <class V>
__host__ __device__ inline V cmake(decltype(V{}.x) re, decltype(V{}.x) im) {
    V v;
    v.x = re;
    v.y = im;
    return v;
}
__device__ inline float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
__device__ inline double2 cmul(double2 a, double2 b) { return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

constexpr double kTwoPiD = 6.283185307179586476925286766559;

// sin and cos of an angle in radians. SoftTrig is the math library's accurate
// implementation (what code compiled without -use_fast_math gets); HardTrig is
// the special-function units' approximation (__sinf, __cosf). Float64 has no
// hardware sin/cos, so HardTrig<double> is the library's.
struct SoftTrig {
    __device__ static void sc(float a, float& s, float& c) {
        s = sinf(a);
        c = cosf(a);
    }
    __device__ static void sc(double a, double& s, double& c) { sincos(a, &s, &c); }
};
struct HardTrig {
    __device__ static void sc(float a, float& s, float& c) { __sincosf(a, &s, &c); }  // one range scaling, two MUFU
    __device__ static void sc(double a, double& s, double& c) { sincos(a, &s, &c); }
};

// exp(i 2 pi t) for t in cycles. The argument is first reduced to [-1/2, 1/2]
// exactly (t - rint(t)), so the SFU works where it is accurate (~4e-7 absolute).
__device__ inline float2 cis2piReduced(float t) {
    float r = t - rintf(t);
    float s, c;
    __sincosf(float(kTwoPiD) * r, &s, &c);
    return make_float2(c, s);
}
__device__ inline double2 cis2piReduced(double t) {
    double r = t - rint(t);
    double s, c;
    sincospi(2.0 * r, &s, &c);
    return make_double2(c, s);
}

}  // namespace recon::cuda
