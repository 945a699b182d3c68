#include "recon/core/host_memory.hpp"

#include <cstdint>

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

}  // namespace recon
