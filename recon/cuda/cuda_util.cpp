#include "recon/cuda/cuda_util.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace recon::cuda {

void check(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return;
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // clear the sticky-free error so later calls work
        throw OutOfMemory(std::string("CUDA: ") + what, 0);
    }
    throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(status) + " (" +
                cudaGetErrorString(status) + ")");
}

void checkLaunch(const char* kernel) { check(cudaGetLastError(), kernel); }

DeviceGuard::DeviceGuard(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (device != previous_) check(cudaSetDevice(device), "cudaSetDevice");
}

DeviceGuard::~DeviceGuard() { cudaSetDevice(previous_); }

Stream::Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
Stream::~Stream() {
    if (s_) cudaStreamDestroy(s_);
}

namespace {
// The out-of-memory injection of the tests (setDeviceMemoryCap): the bytes this
// process holds through allocate(), counted only while a cap is set.
struct MemoryCap {
    std::mutex mutex;
    std::size_t cap = 0;  // 0: none
    std::size_t held = 0;
    std::unordered_map<void*, std::size_t> sizes;
};
MemoryCap& memoryCap() {
    static MemoryCap c;
    return c;
}

// The cap's check and record around one device allocation, `malloc(&p)` (cudaMalloc or the pool's).
template <class Malloc>
void* cappedAllocation(std::size_t bytes, const char* what, Malloc&& malloc) {
    MemoryCap& c = memoryCap();
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        if (c.cap && c.held + bytes > c.cap) throw OutOfMemory(std::string("GPU ") + what + " (memory cap)", bytes);
    }
    void* p = nullptr;
    cudaError_t e = malloc(&p);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        throw OutOfMemory(std::string("GPU ") + what, bytes);
    }
    check(e, what);
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.cap) {
        c.sizes[p] = bytes;
        c.held += bytes;
    }
    return p;
}

// The cap's record of p dropped before p is freed.
void forgetCapped(void* p) noexcept {
    MemoryCap& c = memoryCap();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.sizes.find(p); it != c.sizes.end()) {
        c.held -= it->second;
        c.sizes.erase(it);
    }
}
}  // namespace

void setDeviceMemoryCap(std::size_t bytes) {
    MemoryCap& c = memoryCap();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.cap = bytes;
    if (bytes == 0) {
        c.held = 0;
        c.sizes.clear();
    }
}

void* allocate(std::size_t bytes, const char* what) {
    return cappedAllocation(bytes, what, [&](void** p) { return cudaMalloc(p, bytes); });
}

void release(void* p) noexcept {
    if (!p) return;
    forgetCapped(p);
    cudaFree(p);
}

namespace {
std::atomic<bool> g_stream_ordered{true};

// The default pool of the current device keeps kPoolKeepFraction of its memory across
// synchronisations (by default it returns everything at each one); false where the device has no pools.
bool poolReady() {
    static std::mutex mutex;
    static std::vector<int> state;  // per device: 0 not set up, 1 ready, 2 no pools
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (state.size() <= std::size_t(device)) state.resize(std::size_t(device) + 1, 0);
    int& st = state[std::size_t(device)];
    if (st == 0) {
        int pools = 0;
        cudaMemPool_t pool = nullptr;
        std::size_t free = 0, total = 0;
        if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess && pools &&
            cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess && cudaMemGetInfo(&free, &total) == cudaSuccess) {
            std::uint64_t keep = std::uint64_t(double(total) * kPoolKeepFraction);
            st = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess ? 1 : 2;
        } else {
            st = 2;
        }
        cudaGetLastError();
    }
    return st == 1;
}
}  // namespace

void setStreamOrderedAllocation(bool on) { g_stream_ordered = on; }
bool streamOrderedAllocation() { return g_stream_ordered; }

void* allocate(std::size_t bytes, const char* what, cudaStream_t stream, bool* ordered) {
    *ordered = false;
    if (!g_stream_ordered || !poolReady()) return allocate(bytes, what);
    void* p = cappedAllocation(bytes, what, [&](void** q) { return cudaMallocAsync(q, bytes, stream); });
    *ordered = true;
    return p;
}

void release(void* p, cudaStream_t stream, bool ordered) noexcept {
    if (!ordered) return release(p);
    if (!p) return;
    forgetCapped(p);
    cudaFreeAsync(p, stream);
}

int deviceCount() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

DeviceProps deviceProps(int device) {
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    DeviceProps d;
    d.id = device;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    // cudaDeviceProp::clockRate is gone in CUDA 13; the attribute remains.
    check(cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, device), "cudaDeviceGetAttribute(clock)");
    d.memory_bytes = p.totalGlobalMem;
    char hex[40];
    std::string u;
    for (int i = 0; i < 16; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
        u += hex;
    }
    d.uuid = u;
    return d;
}

std::string DeviceProps::describe() const {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs, %d MHz, %s)", name.c_str(), cc_major, cc_minor, sm_count,
                  clock_khz / 1000, OutOfMemory::humanBytes(memory_bytes).c_str());
    return buf;
}

std::size_t freeDeviceMemory() {
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
}

}  // namespace recon::cuda
