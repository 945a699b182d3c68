// What every FFTW plan of the engine shares (recon/nufft only; callers use FftPlan and
// PaddedConvolution): the planner's lock (FFTW's planner is not thread-safe), its threads,
// the planning rigour and the wisdom saved per machine.
//
// Plans are chosen by measurement (FFTW_MEASURE, at most kPlanningSeconds each) and the
// choices are kept as FFTW "wisdom" in the user's cache folder, one file per host and
// precision ($XDG_CACHE_HOME or ~/.cache, reconstudio/fftw-wisdom-HOST-f32|f64), so only
// a machine's first run of a size pays for the measuring. RECONSTUDIO_FFTW_WISDOM=0
// plans by FFTW's estimate instead, reading and writing no file; =PATH uses that folder.
// A damaged wisdom file is ignored with a note on stderr, and replaced.
#pragma once

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "recon/core/errors.hpp"

namespace recon::fftw {

std::mutex& plannerMutex();
// Threads set up (once per process) and the wisdom of one precision read (once per folder), only
// when a plan of it is made: each file is some 250 KB of text, 5-10 ms of a 2D run's CPU time to
// import. Call with the planner's lock held.
void prepare(bool single_precision);
template <class T>
void prepare() {
    prepare(std::is_same_v<T, float>);
}
// FFTW_MEASURE for a transform of `points` values, or FFTW_ESTIMATE where wisdom is
// disabled or the transform is larger than kMeasureLimit (measuring would fill a scratch
// buffer of its size, and take longest where a first run can least afford it).
unsigned planningFlags(std::size_t points);
// After planning (the lock held): writes the wisdom file again if planning added to it.
void savePlans();
// Called by planned() when a plan was measured: savePlans has something new to write.
void noteNewWisdom();
// make(flags) with planningFlags(points) (make adds its own flags, e.g. FFTW_UNALIGNED). A
// measured plan is first asked of the wisdom alone (FFTW_WISDOM_ONLY: no measuring); only one
// the wisdom lacks is measured and marks it new, so savePlans exports the wisdom (some 140 KB
// of text per precision, ~2 ms) only then, not after every plan of every run.
template <class Make>
auto planned(std::size_t points, Make&& make) {
    const unsigned flags = planningFlags(points);
    if (!(flags & FFTW_ESTIMATE)) {
        if (auto p = make(flags | FFTW_WISDOM_ONLY)) return p;
        noteNewWisdom();
    }
    return make(flags);
}
// The wisdom files' folder the environment asks for, or "" when wisdom is disabled.
std::string wisdomFolder();
// Keeps wisdom in `folder` from now on ("": plans by estimate, no files): forgets what was
// loaded; prepare() reads that folder's file of a precision when it is first needed (the lock
// held). The first prepare() calls it with wisdomFolder().
void useWisdomFolder(const std::string& folder);
// The wisdom file of one precision in the folder in use.
std::string wisdomPath(bool single_precision);

// A measuring planner may take this long per plan before it settles for the best so far.
constexpr double kPlanningSeconds = 2.0;
constexpr std::size_t kMeasureLimit = std::size_t(1) << 24;  // 256^3

// FFTW's two precisions behind one name (fftw_iodim is shared by both): guru plans of one
// transformed axis and any loops, complex to complex (in or out of place) and real to
// complex / complex to real. Plans run with new-array execute on buffers aligned as the
// ones they were planned on.
template <class T>
struct Api;
template <>
struct Api<double> {
    using Plan = fftw_plan;
    using Cpx = fftw_complex;
    static Plan guru(const fftw_iodim& line, int loops, const fftw_iodim* loop, Cpx* in, Cpx* out, int sign, unsigned flags) {
        return fftw_plan_guru_dft(1, &line, loops, loop, in, out, sign, flags);
    }
    static Plan guruR2C(const fftw_iodim& line, int loops, const fftw_iodim* loop, double* in, Cpx* out, unsigned flags) {
        return fftw_plan_guru_dft_r2c(1, &line, loops, loop, in, out, flags);
    }
    static Plan c2r(int rank, const int* n, Cpx* in, double* out, unsigned flags) {
        return fftw_plan_dft_c2r(rank, n, in, out, flags);
    }
    static Plan r2c(int rank, const int* n, double* in, Cpx* out, unsigned flags) {
        return fftw_plan_dft_r2c(rank, n, in, out, flags);
    }
    static void run(Plan p, Cpx* data) { fftw_execute_dft(p, data, data); }
    static void run(Plan p, Cpx* in, Cpx* out) { fftw_execute_dft(p, in, out); }
    static void runR2C(Plan p, double* in, Cpx* out) { fftw_execute_dft_r2c(p, in, out); }
    static void runC2R(Plan p, Cpx* in, double* out) { fftw_execute_dft_c2r(p, in, out); }
    static void destroy(Plan p) { fftw_destroy_plan(p); }
    static void threads(int n) { fftw_plan_with_nthreads(n); }
    static void* alloc(std::size_t bytes) { return fftw_malloc(bytes); }
    static void release(void* p) { fftw_free(p); }
    static int alignmentOf(const void* p) { return fftw_alignment_of(static_cast<double*>(const_cast<void*>(p))); }
};
template <>
struct Api<float> {
    using Plan = fftwf_plan;
    using Cpx = fftwf_complex;
    static Plan guru(const fftw_iodim& line, int loops, const fftw_iodim* loop, Cpx* in, Cpx* out, int sign, unsigned flags) {
        return fftwf_plan_guru_dft(1, &line, loops, loop, in, out, sign, flags);
    }
    static Plan guruR2C(const fftw_iodim& line, int loops, const fftw_iodim* loop, float* in, Cpx* out, unsigned flags) {
        return fftwf_plan_guru_dft_r2c(1, &line, loops, loop, in, out, flags);
    }
    static Plan c2r(int rank, const int* n, Cpx* in, float* out, unsigned flags) {
        return fftwf_plan_dft_c2r(rank, n, in, out, flags);
    }
    static Plan r2c(int rank, const int* n, float* in, Cpx* out, unsigned flags) {
        return fftwf_plan_dft_r2c(rank, n, in, out, flags);
    }
    static void run(Plan p, Cpx* data) { fftwf_execute_dft(p, data, data); }
    static void run(Plan p, Cpx* in, Cpx* out) { fftwf_execute_dft(p, in, out); }
    static void runR2C(Plan p, float* in, Cpx* out) { fftwf_execute_dft_r2c(p, in, out); }
    static void runC2R(Plan p, Cpx* in, float* out) { fftwf_execute_dft_c2r(p, in, out); }
    static void destroy(Plan p) { fftwf_destroy_plan(p); }
    static void threads(int n) { fftwf_plan_with_nthreads(n); }
    static void* alloc(std::size_t bytes) { return fftwf_malloc(bytes); }
    static void release(void* p) { fftwf_free(p); }
    static int alignmentOf(const void* p) { return fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p))); }
};

template <class T>
typename Api<T>::Cpx* cpx(std::complex<T>* p) {
    return reinterpret_cast<typename Api<T>::Cpx*>(p);
}

// An FFTW-aligned array of n values of V (a float, double or std::complex of them), zeroed.
template <class V>
struct RealOf {
    using type = V;
};
template <class R>
struct RealOf<std::complex<R>> {
    using type = R;
};

template <class V>
struct Buffer {
    using Real = typename RealOf<V>::type;
    V* p = nullptr;
    std::size_t n = 0;
    explicit Buffer(std::size_t size = 0, const char* what = "an FFT work array") : n(size) {
        if (size) {
            p = static_cast<V*>(Api<Real>::alloc(size * sizeof(V)));
            if (!p) throw OutOfMemory(what, size * sizeof(V));
            std::fill(p, p + size, V(0));
        }
    }
    ~Buffer() { Api<Real>::release(p); }
    Buffer(Buffer&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; o.n = 0; }
    Buffer& operator=(Buffer&& o) noexcept {
        std::swap(p, o.p);
        std::swap(n, o.n);
        return *this;
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
};

}  // namespace recon::fftw
