// Large host arrays made again and again: every solve hands out a new image (32 MB
// at 128^3 in complex<double>). glibc serves such blocks straight from mmap and
// unmaps them when freed, so each new array faults in its ~8,000 small pages afresh
// (5-20 ms at 128^3 on one thread, depending on the machine). Two remedies, each
// harmless where it does not apply.
#pragma once

#include <cstddef>
#include <string>

#include "recon/core/types.hpp"

namespace recon {

// Keeps freed blocks up to 1 GiB in the heap for the next allocation (glibc's mmap
// and trim thresholds; a no-op elsewhere, or where glibc refuses so high a value).
// Call once at program start, before threads start.
void retainLargeHostAllocations();

// Resizes `a` to `n` values the caller is about to overwrite. When that needs a new
// block, transparent huge pages are asked for it before its first touch (Linux; a
// hint the kernel may ignore), so its page faults are a few dozen, not thousands.
void resizeForOverwrite(ComplexArray& a, std::size_t n);

// Memory this process can still get: the kernel's MemAvailable, within the
// cgroup's memory.max where one is set; 0 when neither can be read.
std::size_t availableHostMemory();

// Throws InputError "<what> needs about X of host memory, Y is available" when
// `bytes` exceed what is available (checked before allocating, so an absurd
// size is a message, not std::bad_alloc or the kernel's OOM killer).
void requireHostMemory(std::size_t bytes, const std::string& what);

}  // namespace recon
