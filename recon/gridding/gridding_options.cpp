#include "recon/gridding/gridding_options.hpp"

namespace recon {

GriddingOptions trilinearGridding() {
    GriddingOptions o;
    o.kernel = SpreadKernelKind::Linear;
    o.oversampling = 1.0;
    o.width = 2;
    o.deapodize = false;
    return o;
}

GriddingOptions kaiserBesselGridding(double sigma, int width) {
    GriddingOptions o;
    o.kernel = SpreadKernelKind::KaiserBessel;
    o.oversampling = sigma;
    o.width = width;
    o.deapodize = true;
    return o;
}

SpreadKernel griddingKernel(const GriddingOptions& o) {
    switch (o.kernel) {
        case SpreadKernelKind::Linear: {
            SpreadKernel k = SpreadKernel::linear();
            k.sigma = o.oversampling;
            return k;
        }
        case SpreadKernelKind::KaiserBessel: return SpreadKernel::kaiserBessel(o.oversampling, o.width);
        case SpreadKernelKind::ExpSemicircle: return SpreadKernel::expSemicircle(o.oversampling, o.width);
    }
    return SpreadKernel::linear();
}

}  // namespace recon
