// F^H d and forward direct sums in float32 (see direct_sums_impl.cuh).
#define RECON_DIRECT_REAL float
#include "recon/cuda/direct_sums_impl.cuh"
