// What a gridding reconstruction spreads with: the seeds' trilinear baseline or
// convolution gridding with a Kaiser-Bessel kernel (Beatty et al. 2005).
#pragma once

#include "recon/nufft/spread_kernel.hpp"

namespace recon {

struct GriddingOptions {
    SpreadKernelKind kernel = SpreadKernelKind::KaiserBessel;
    double oversampling = 2.0;  // sigma (1.0 for the seeds' trilinear gridding)
    int width = 4;              // kernel width W in oversampled cells
    bool deapodize = true;
};
GriddingOptions trilinearGridding();      // the seeds' baseline: sigma = 1, linear, no deapodisation
GriddingOptions kaiserBesselGridding(double sigma = 2.0, int width = 4);  // Beatty et al. 2005
SpreadKernel griddingKernel(const GriddingOptions& o);

}  // namespace recon
