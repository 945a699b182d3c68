// A preconditioner for SENSE's normal equations (sum_c S_c^H T S_c + w W^H W) x = E^H d.
// With maps normalised so that g = sum_c |S_c|^2 is 1 (ESPIRiT's, inside the object), E^H E is
// close to T, and the single-coil circulant preconditioner C^{-p} (C = circ(T) + w circ(W^H W),
// recon/backend/circulant_preconditioner.hpp) fits it; where g varies (unnormalised maps, the
// object's edge, outside ESPIRiT's mask) E^H E is closer to G^{1/2} T G^{1/2}. So the circulant
// is corrected by a similarity with a diagonal,
//     M^{-1} = D^{-p/2} C^{-p} D^{-p/2},   D = diag(A) / diag(C) = (g c_d + w c_p) / (c_d + w c_p),
// c_d and c_p the circulants' diagonals (their eigenvalues' means): Jacobi's diagonal over the
// circulant's own. M^{-1} stays Hermitian positive definite, so CG stays valid and converges to
// the same solution; where g = 1, D = 1 and it is the single-coil preconditioner. Everything
// is on the backend (the maps' energy and its inside/outside masks once, Backend::thresholdMasks;
// D per weight: one combination and two powers): on a GPU nothing crosses to the host.
#pragma once

#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/linop/linear_operator.hpp"

namespace recon {

// g = sum_c |S_c|^2 on `space`, from the maps resident there (one vector per coil), or from host
// maps (coils x voxels, coil after coil; uploaded coil by coil). InputError on mismatched sizes.
Vector coilEnergy(VectorSpace& space, const std::vector<const Vector*>& maps);
Vector coilEnergy(VectorSpace& space, const ComplexArray& maps, std::size_t voxels);

// SENSE's p: M^{-1/2}. Measured (docs/SENSE.md, "The preconditioner"): on 3D radial 32^3 with smooth
// unnormalised maps 3/4 reached plain CG's 30-iteration PSNR later than plain CG itself (84 iterations),
// 1/2 in 17; on radial-2d-8coil with ESPIRiT's maps they were close (converged in 23 and 25 iterations).
inline constexpr double kSenseCirculantExponent = 0.5;

class SensePreconditioner {
public:
    SensePreconditioner(Backend& backend, Vector coil_energy);
    // D^{-p/2} C^{-p} D^{-p/2} for the weight w: `circulant` is C^{-p} for that weight (made by
    // inverseCirculant with `exponent` p), `data_eigenvalues` and `penalty_eigenvalues` (null
    // without a penalty) its circulants' eigenvalues. InputError on mismatched sizes or a
    // weight that is not a finite number >= 0.
    LinearOperatorPtr make(LinearOperatorPtr circulant, const Vector& data_eigenvalues, const Vector* penalty_eigenvalues,
                           double weight, double exponent) const;

    // Voxels whose maps' energy is at most this fraction of the largest: "outside" (ESPIRiT's maps are zero
    // beyond their mask). There E^H E vanishes, only the penalty acts, and the circulant of T spreads
    // the residual into voxels whose errors CG's energy norm hardly sees (measured: plain CG's
    // 60-iteration image fell from 30.6 to 13 dB); so M^{-1} is Jacobi's 1 / diag(A) there instead.
    static constexpr double kInside = 0.1;

private:
    Backend& backend_;
    Vector energy_, ones_, inside_, outside_;
    double largest_ = 0;
};

}  // namespace recon
