// Small CUDA runtime helpers shared by the backend's files: error checks that
// raise the engine's exceptions, a typed device buffer whose allocation failure
// is a recon::OutOfMemory naming what was being allocated, device selection.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <cstddef>
#include <string>
#include <utility>

#include "recon/core/errors.hpp"

namespace recon::cuda {

// Throws recon::Error naming `what` when `status` is not cudaSuccess.
void check(cudaError_t status, const char* what);
// Checks the last launch (kernel configuration and asynchronous errors so far).
void checkLaunch(const char* kernel);

// Sets the current device for the lifetime of the guard and restores the previous one.
class DeviceGuard {
public:
    explicit DeviceGuard(int device);
    ~DeviceGuard();
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = 0;
};

// An owned, non-blocking CUDA stream. Shared (shared_ptr) by the objects that
// enqueue on it, so a Toeplitz kernel outlives the backend that made it.
class Stream {
public:
    Stream();
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return s_; }

private:
    cudaStream_t s_ = nullptr;
};

// Out-of-memory injection for tests: allocations that would take what this process
// holds through allocate() past `bytes` throw OutOfMemory, as a full device does.
// 0 lifts the cap. Only allocations made while a cap is set are counted.
void setDeviceMemoryCap(std::size_t bytes);

// Raw allocation: throws OutOfMemory(what, bytes) when the device is full.
void* allocate(std::size_t bytes, const char* what);
void release(void* p) noexcept;

// Stream-ordered allocation for buffers used on one stream only (a backend's vectors, a Toeplitz
// kernel's grids): cudaMallocAsync from the device's default memory pool, freed in the stream's
// order (cudaFreeAsync). cudaFree waits for the whole device and cudaMalloc maps pages each time;
// the pool keeps up to kPoolKeepFraction of the device's memory that was freed for the next
// allocation (a session's repeated solves reuse their grids) and returns the rest at
// synchronisation. *ordered says which way it went (false: allocate() above, where switched off
// or where the device has no memory pools).
inline constexpr double kPoolKeepFraction = 1.0 / 16;
void* allocate(std::size_t bytes, const char* what, cudaStream_t stream, bool* ordered);
void release(void* p, cudaStream_t stream, bool ordered) noexcept;
// On by default; off: every buffer through cudaMalloc/cudaFree (the benchmark's before/after).
void setStreamOrderedAllocation(bool on);
bool streamOrderedAllocation();

// A typed, move-only device array of `size()` elements. Element types are host
// types (float, std::complex<float>, ...); kernels reinterpret complex as float2/double2.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(std::size_t n, const char* what) : n_(n) {
        if (n) p_ = static_cast<T*>(allocate(n * sizeof(T), what));
    }
    // Stream-ordered (see allocate above): only for a buffer that no other stream touches.
    DeviceBuffer(std::size_t n, const char* what, cudaStream_t stream) : n_(n), stream_(stream) {
        if (n) p_ = static_cast<T*>(allocate(n * sizeof(T), what, stream, &ordered_));
    }
    ~DeviceBuffer() { release(p_, stream_, ordered_); }
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), stream_(o.stream_), ordered_(std::exchange(o.ordered_, false)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            release(p_, stream_, ordered_);
            p_ = std::exchange(o.p_, nullptr);
            n_ = std::exchange(o.n_, 0);
            stream_ = o.stream_;
            ordered_ = std::exchange(o.ordered_, false);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* data() { return p_; }
    const T* data() const { return p_; }
    std::size_t size() const { return n_; }
    std::size_t bytes() const { return n_ * sizeof(T); }
    bool empty() const { return n_ == 0; }

    // Transfers are ordered on stream `s`: pass the stream the data was produced on.
    void upload(const T* host, std::size_t n, cudaStream_t s = nullptr) {
        check(cudaMemcpyAsync(p_, host, n * sizeof(T), cudaMemcpyHostToDevice, s), "upload to the device");
    }
    void download(T* host, std::size_t n, cudaStream_t s = nullptr) const {
        check(cudaMemcpyAsync(host, p_, n * sizeof(T), cudaMemcpyDeviceToHost, s), "download from the device");
        check(cudaStreamSynchronize(s), "download from the device");
    }
    void fill0(cudaStream_t s = nullptr) {
        if (n_) check(cudaMemsetAsync(p_, 0, bytes(), s), "clear a device buffer");
    }

private:
    T* p_ = nullptr;
    std::size_t n_ = 0;
    cudaStream_t stream_ = nullptr;
    bool ordered_ = false;  // freed with cudaFreeAsync on stream_
};

// Device facts the backend, the tuner and the benchmark use.
struct DeviceProps {
    int id = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    int clock_khz = 0;         // maximum SM clock
    std::size_t memory_bytes = 0;
    std::string uuid;          // stable key for the tuning cache
    // Sine and cosine per clock per SM on the special-function units (MUFU):
    // 16 on compute capability 5.x-9.x, 32 on 10.x and later (CUDA Programming Guide, arithmetic throughput).
    int sfuPerClock() const { return cc_major >= 10 ? 32 : 16; }
    // Upper bound on (sample, voxel) pairs per second of a kernel that computes one sin and one cos per pair.
    double sfuBoundPairsPerSecond() const { return double(sm_count) * clock_khz * 1e3 * sfuPerClock() / 2.0; }
    std::string describe() const;  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 1980 MHz, 79.1 GiB)"
};
int deviceCount();  // 0 when there is no driver or no device
DeviceProps deviceProps(int device);
std::size_t freeDeviceMemory();

}  // namespace recon::cuda
