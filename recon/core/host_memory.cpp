#include "recon/core/host_memory.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace recon {

void retainLargeHostAllocations() {
#if defined(__GLIBC__)
    constexpr int kLimit = 1 << 30;
    mallopt(M_MMAP_THRESHOLD, kLimit);
    mallopt(M_TRIM_THRESHOLD, kLimit);
#endif
}

}  // namespace recon
