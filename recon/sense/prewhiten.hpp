// Noise prewhitening and coil compression: what happens to multi-coil k-space
// before any reconstruction. Both act across coils, sample by sample, on data
// stored coil after coil (coils x M, sample index fastest, as Dataset holds them).
#pragma once

#include <memory>
#include <string>

#include "recon/core/dataset.hpp"
#include "recon/core/types.hpp"
#include "recon/sense/small_linalg.hpp"

namespace recon {

// Psi = 1/(N-1) sum_n n n^H from noise samples (coils x N, coil after coil).
// Throws InputError when there are fewer than two samples per coil or the size does not divide.
SquareMatrix noiseCovariance(const ComplexArray& noise, int coils);

// d <- L^{-1} d with L L^H = Psi: the whitened coils have unit, uncorrelated noise.
// Throws InputError on a size mismatch, NumericalError when Psi is not positive definite.
void prewhiten(ComplexArray& kspace, int coils, const SquareMatrix& covariance);

// A data set's own noise scan applied, as the session does on setDataset (so the CLI, the GUI
// and batches all whiten): k-space whitened by the covariance of `d.noise`, the noise samples
// then dropped (spent: whitening twice would be wrong) and `d.source` noting it. Returns false,
// changing nothing, when there are no noise samples. Throws InputError when the noise scan cannot
// whiten the coils (a coil without noise, or two identical coils).
bool prewhitenWithNoiseScan(Dataset& d);
// The same without changing `d`: a copy whose k-space is written whitened straight from d's (no
// copy of the raw k-space first), every large array copied on the host's cores. Null when d has
// no noise samples. The same InputErrors.
std::shared_ptr<Dataset> prewhitenedCopy(const Dataset& d);

// Coil compression by PCA (SVD of the coils x M data matrix through its Gram matrix):
// the K virtual coils along the K largest singular vectors.
struct CoilCompression {
    SquareMatrix basis;               // columns: the eigenvectors of D D^H, strongest first
    std::vector<double> energies;     // eigenvalues of D D^H (squared singular values), descending
    int virtual_coils = 0;            // K
    double kept_energy = 0;           // sum of the first K energies / the total, in [0, 1]
};
// K = `virtual_coils` when > 0, else the smallest K whose kept energy reaches `energy_threshold`
// (e.g. 0.99). Throws InputError when K exceeds the coils or the threshold is outside (0, 1].
CoilCompression planCoilCompression(const ComplexArray& kspace, int coils, int virtual_coils,
                                    double energy_threshold = 0.99);
// The virtual coils' data: v_k = u_k^H d (K x M, coil after coil).
ComplexArray compressCoils(const ComplexArray& kspace, int coils, const CoilCompression& plan);

// What happened to a data set's coils before reconstruction (the CLI prints it, the GUI's data panel shows it).
struct CoilPreparation {
    int coils = 1;                   // as the data set came
    std::size_t noise_samples = 0;   // per coil, of the noise scan that whitened them (0: not whitened)
    int virtual_coils = 0;           // after compression (0: not compressed)
    double kept_energy = 1;          // of the compression
};
// The data set's noise scan applied (prewhitenWithNoiseScan), then, when `virtual_coils` > 0, the
// coils compressed to that many (planCoilCompression, compressCoils): whitening must come first.
// Throws InputError as those do (e.g. more virtual coils than coils).
CoilPreparation prepareCoils(Dataset& d, int virtual_coils);

}  // namespace recon
