// SENSE (Pruessmann et al. 2001) as operators written once against the
// VectorSpace, so they run on every backend without code of their own:
//   E x      = [F (S_1 .* x); ...; F (S_C .* x)]   (coils one after another, as Dataset stores them)
//   E^H d    = sum_c conj(S_c) .* F^H d_c
//   E^H E x  = sum_c conj(S_c) .* T (S_c .* x)     with ONE Toeplitz kernel T = F^H F shared by
//                                                  all coils (one trajectory, one Q).
// F is the single-coil encoding operator (diag(phi) * Fourier sums, its normal the Toeplitz
// embedding); the maps are uploaded once and stay resident.
#pragma once

#include <memory>
#include <vector>

#include "recon/linop/linear_operator.hpp"

namespace recon {

class SenseOperator final : public LinearOperator {
public:
    // `maps`: coils x voxels, coil after coil (F->inSize() voxels each). Throws InputError
    // when the maps do not fill whole coils of F's image, or are empty.
    SenseOperator(LinearOperatorPtr fourier, const ComplexArray& maps);
    int coils() const { return int(maps_.size()); }
    std::size_t voxels() const { return fourier_->inSize(); }
    std::size_t samplesPerCoil() const { return fourier_->outSize(); }

protected:
    void applyForward(const Vector& x, Vector& y) const override;
    void applyAdjoint(const Vector& y, Vector& x) const override;
    void applyNormal(const Vector& x, Vector& y) const override;

private:
    LinearOperatorPtr fourier_;
    std::vector<Vector> maps_;  // one resident vector per coil
};

// E^H d = sum_c conj(S_c) .* (F^H d_c) from per-coil F^H d_c already on the backend
// (the session caches them): the SENSE right-hand side without a second pass over the data.
// Sizes are checked (InputError).
Vector senseAdjointFromCoilImages(VectorSpace& space, const std::vector<const Vector*>& coil_adjoints,
                                  const ComplexArray& maps);

}  // namespace recon
