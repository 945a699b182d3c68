#include "recon/core/host_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>

#include "recon/core/errors.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace recon {

void retainLargeHostAllocations() {
#if defined(__GLIBC__)
    constexpr int kLimit = 1 << 30;
    mallopt(M_MMAP_THRESHOLD, kLimit);
    mallopt(M_TRIM_THRESHOLD, kLimit);
#endif
}

void resizeForOverwrite(ComplexArray& a, std::size_t n) {
    if (a.size() == n) return;
    if (a.capacity() < n) {
        ComplexArray fresh;
        fresh.reserve(n);  // allocated, not yet touched
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        constexpr std::uintptr_t kHugePage = std::uintptr_t(2) << 20;
        const auto start = reinterpret_cast<std::uintptr_t>(fresh.data());
        const std::uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
        const std::uintptr_t end = (start + n * sizeof(cdouble)) & ~(kHugePage - 1);
        if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
        a.swap(fresh);
    }
    a.resize(n);
}

namespace {
// The number after `key` in a text file ("MemAvailable:  123 kB"), or 0.
std::size_t numberAfter(const char* path, const std::string& key) {
    std::ifstream in(path);
    std::string word;
    while (in >> word)
        if (word == key) {
            std::size_t v = 0;
            return (in >> v) ? v : 0;
        }
    return 0;
}
}  // namespace

std::size_t availableHostMemory() {
    std::size_t available = numberAfter("/proc/meminfo", "MemAvailable:") * 1024;
    std::ifstream limit("/sys/fs/cgroup/memory.max"), used("/sys/fs/cgroup/memory.current");
    std::size_t max = 0, current = 0;
    if (limit >> max && used >> current && max > current)  // "max" (no limit) reads as no number
        available = available ? std::min(available, max - current) : max - current;
    return available;
}

void requireHostMemory(std::size_t bytes, const std::string& what) {
    const std::size_t available = availableHostMemory();
    if (available > 0 && bytes > available)
        throw InputError(what + " needs about " + OutOfMemory::humanBytes(bytes) + " of host memory; " +
                         OutOfMemory::humanBytes(available) + " is available");
}

}  // namespace recon
