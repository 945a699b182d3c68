// F^H d and forward direct sums in float64 (see direct_sums_impl.cuh).
#define RECON_DIRECT_REAL double
#include "recon/cuda/direct_sums_impl.cuh"
