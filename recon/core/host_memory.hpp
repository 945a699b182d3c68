// Large host arrays made again and again: every solve hands out a new image (32 MB
// at 128^3 in complex<double>). By default glibc serves such blocks straight from
// mmap and unmaps them when freed, so each new array faults in its ~8,000 pages
// afresh (5-10 ms at 128^3, on one thread). Keeping freed blocks in the heap
// lets the next array reuse pages that are already mapped.
#pragma once

namespace recon {

// Raises glibc's mmap and trim thresholds to 1 GiB (a no-op elsewhere). Call once
// at program start, before threads start.
void retainLargeHostAllocations();

}  // namespace recon
