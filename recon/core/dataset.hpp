// A data set as every part of the program sees it: what a reader returns, what
// `simulate` makes, what the reconstruction consumes.
#pragma once

#include <string>
#include <vector>

#include "recon/core/conventions.hpp"
#include "recon/core/types.hpp"

namespace recon {

// A new field: copy it in prewhitenedCopy (recon/sense/prewhiten.cpp) too, which copies field by field.
struct Dataset {
    std::string name;            // shown in the GUI and in tables
    std::string source;          // where it came from, and which units were assumed
    Grid grid;
    Trajectory trajectory;       // cycles per FOV
    int coils = 1;
    ComplexArray kspace;         // coils x M, sample index fastest
    std::vector<double> density; // optional density weights w (not sqrt(w)), M values
    ComplexArray truth;          // optional true image (grid.voxels()), for error/PSNR
    ComplexArray reference;      // optional anatomical reference (grid.voxels())
    ComplexArray noise;          // optional noise samples (coils x N, sample index fastest): a noise scan
    // > 0: k-space was whitened by a noise scan of this many samples per coil (recon/sense/prewhiten.hpp),
    // which is then spent; its noise is unit and uncorrelated, sigma = 1 (lambda_choice's noise level).
    std::size_t whitened_by_noise_samples = 0;
    BasisFunction basis = kDefaultBasis;

    std::size_t samples() const { return trajectory.samples(); }
    bool hasTruth() const { return !truth.empty(); }
    bool hasReference() const { return !reference.empty(); }
    const cdouble* coil(int c) const { return kspace.data() + std::size_t(c) * samples(); }

    // Throws InputError naming what is wrong: shapes, NaN/Inf, k outside the band,
    // absurd sizes. `origin` (a file name) prefixes the message.
    void validate(const std::string& origin = "data set") const;
};

// Memory a reconstruction of this size needs on a backend of `precision`, per stage: what
// each stage allocates at its peak (the oversampled grids of Pipe-Menon, gridding and of Q's
// NUFFT on the 2N grid, the CG's vectors), plus what stays from earlier stages. An upper
// bound for the exact sums (they need no oversampled grid). Checked before allocating
// (ReconstructionSession) and shown in the GUI's data panel.
struct MemoryEstimate {
    std::size_t gridding = 0;  // density weights and both gridding images
    std::size_t solve = 0;     // Q, F^H d of every coil, the solver
    std::size_t peak() const { return gridding > solve ? gridding : solve; }
};
// `q_oversampling`: the fine grid of Q's NUFFT per axis of the 2N grid (1.5 on the CPU and CUDA backends).
MemoryEstimate estimateReconstructionMemory(const Grid& g, std::size_t samples, int coils, Precision precision,
                                            double q_oversampling = 2.0);
// The peak for one coil.
std::size_t estimateReconstructionBytes(const Grid& g, std::size_t samples, Precision precision);

}  // namespace recon
