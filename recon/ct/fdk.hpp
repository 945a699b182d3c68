// FDK (Feldkamp, Davis, Kress 1984), CT's analytic reconstruction and the
// baseline the iterative one is compared with; fan-beam FBP is its case of one
// detector row and one slice. Per view: cosine pre-weighting, Parker weights
// for a short scan, the ramp filter along detector rows by FFT with zero
// padding (the band-limited ramp of Kak & Slaney, sampled in space so that its
// DC term is right, times a window), then voxel-driven backprojection with
// the distance weight (D_so / L)^2 and bilinear interpolation on the detector.
//
// Full or short scan is read from the angles: views spanning a whole turn are
// a full scan (each ray measured twice: factor 1/2); a shorter span must cover
// π + 2γ_max (γ_max the fan half-angle) and gets Parker's weights (1982),
// with the overscan δ = (span − π)/2.
#pragma once

#include <string>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/ct/geometry.hpp"

namespace recon::ct {

// The ramp filter's window in frequency, r = f / f_Nyquist in [0, 1]:
// Ram-Lak 1, Shepp-Logan sinc(r/2), cosine cos(πr/2), Hamming 0.54 + 0.46 cos(πr), Hann 0.5 + 0.5 cos(πr).
enum class RampWindow { RamLak, SheppLogan, Cosine, Hamming, Hann };
std::string toString(RampWindow w);     // "ram-lak", "shepp-logan", "cosine", "hamming", "hann"
RampWindow parseRampWindow(const std::string& s);  // InputError listing the names otherwise
double rampWindow(RampWindow w, double r);

struct FdkOptions {
    RampWindow window = RampWindow::RamLak;
    int threads = 0;  // backprojection threads: 0 = all cores
};

// Whether the angles (increasing) cover a whole turn; false for a short scan.
bool fullScan(const ConeBeamGeometry& beam);
// Parker's weight of the ray at detector column position u (mm) in view `view` of a short scan.
double parkerWeight(const ConeBeamGeometry& beam, std::size_t view, double u);

// The volume (geometry.volume.voxels() values, 1/mm) from projections (beam.samples() line
// integrals). Progress per view; cancel takes effect between views (throws Cancelled).
std::vector<double> fdk(const CtGeometry& geometry, const std::vector<double>& projections,
                        const FdkOptions& options = {}, const Progress& progress = {});

}  // namespace recon::ct
