// SENSE (Pruessmann et al. 2001) as operators written once against the
// VectorSpace, so they run on every backend without code of their own:
//   E x      = [F (S_1 .* x); ...; F (S_C .* x)]   (coils one after another, as Dataset stores them)
//   E^H d    = sum_c conj(S_c) .* F^H d_c
//   E^H E x  = sum_c conj(S_c) .* T (S_c .* x)     with ONE Toeplitz kernel T = F^H F shared by
//                                                  all coils (one trajectory, one Q).
// F is the single-coil encoding operator (diag(phi) * Fourier sums, its normal the Toeplitz
// embedding); the maps are uploaded once and stay resident.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/linop/linear_operator.hpp"

namespace recon {

class SenseOperator final : public LinearOperator {
public:
    // `maps`: coils x voxels, coil after coil (F->inSize() voxels each). `kernel`, when given, is
    // F's normal F^H F (the session's Toeplitz kernel): the normal then runs as one
    // ToeplitzOperator::coilSumNormal over all coils (batched on a GPU); without it, F's normal
    // coil by coil. Throws InputError when the maps do not fill whole coils of F's image, are
    // empty, or the kernel is for another image.
    SenseOperator(LinearOperatorPtr fourier, const ComplexArray& maps, std::shared_ptr<const ToeplitzOperator> kernel = nullptr);
    int coils() const { return int(maps_.size()); }
    std::size_t voxels() const { return fourier_->inSize(); }
    std::size_t samplesPerCoil() const { return fourier_->outSize(); }
    const std::vector<const Vector*>& maps() const { return map_ptrs_; }  // resident, one per coil
    // E^H d = sum_c conj(S_c) .* (F^H d_c) from per-coil F^H d_c on the backend (the session
    // caches them), with the resident maps: no pass over the data, no second upload of the maps.
    // Sizes are checked (InputError).
    Vector adjointFromCoilImages(const std::vector<const Vector*>& coil_adjoints) const;

protected:
    void applyForward(const Vector& x, Vector& y) const override;
    void applyAdjoint(const Vector& y, Vector& x) const override;
    void applyNormal(const Vector& x, Vector& y) const override;

private:
    LinearOperatorPtr fourier_;
    std::shared_ptr<const ToeplitzOperator> kernel_;  // F^H F, or null
    std::vector<Vector> maps_;  // one resident vector per coil
    std::vector<const Vector*> map_ptrs_;
};

// The same from host maps (uploaded here, coil by coil): for an operator split over devices,
// whose maps live on their own devices. Sizes are checked (InputError).
Vector senseAdjointFromCoilImages(VectorSpace& space, const std::vector<const Vector*>& coil_adjoints,
                                  const ComplexArray& maps);

// A device the coils can be split over: a backend of its own (a GPU, or the same GPU again
// on a stream of its own; any backend works) and its name in messages ("GPU 1").
struct SplitDevice {
    std::shared_ptr<Backend> backend;
    std::string name;
};

// The SENSE operator with its coils split over `devices`: contiguous shares as even as
// possible (a device beyond the number of coils gets none), each share the SenseOperator of
// its coils on its device, made with `fourier_on(device)` (the single-coil encoding operator
// there, its normal that device's copy of the one Toeplitz kernel), all seen from `home` as
// one operator whose normal sums the shares' partial normals every application
// (linop/distributed_stack.hpp), which keeps the devices' backends alive. One device that is
// `home`: the plain SenseOperator.
LinearOperatorPtr splitSense(VectorSpace& home, const std::vector<SplitDevice>& devices, const ComplexArray& maps,
                             std::size_t voxels, const std::function<LinearOperatorPtr(Backend&)>& fourier_on);

}  // namespace recon
