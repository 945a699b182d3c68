// GPU.Tune's exhaustive search (Stone et al. 2008, section 5.6): threads per
// block 32..512 by 32, tile 32..2048 scan points by powers of two (1024 in
// float64: constant memory holds 40 KiB of tile), unroll 1..8; plus the scan tile
// in shared memory (threads by 64, tiles to 1024, unroll 1/2/4/8). It times every
// configuration on a representative sub-problem on the device and caches the
// winner per GPU (UUID) and precision, in memory and in a small text file
// ($RECONSTUDIO_TUNE_CACHE, else $XDG_CACHE_HOME or ~/.cache/reconstudio/cuda-tune-v3.txt).
#pragma once

#include <string>

#include "recon/cuda/direct_sums.hpp"

namespace recon::cuda {

struct TuneResult {
    TuneParams best;
    double pairs_per_second = 0;  // on the search's sub-problem
    int configurations = 0;       // timed (0: read from the cache)
    double seconds = 0;           // the search's wall time
    bool from_cache = false;
};

// The tuned parameters for `device` (the current device's context is used).
// `quick` searches a coarse subset (tests); a full search takes a few seconds.
template <class T>
TuneResult tunedParams(int device, bool quick = false, bool force = false);

std::string tuneCachePath();

}  // namespace recon::cuda
