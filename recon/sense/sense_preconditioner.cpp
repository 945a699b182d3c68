#include "recon/sense/sense_preconditioner.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "recon/core/errors.hpp"

namespace recon {
namespace {

// The mean of a vector's real parts: dot(ones, v) / n (eigenvalues are real; the mean is the
// circulant's diagonal).
double meanReal(VectorSpace& space, const Vector& ones, const Vector& v) { return space.dot(ones, v).real() / double(v.size()); }

}  // namespace

Vector coilEnergy(VectorSpace& space, const std::vector<const Vector*>& maps) {
    if (maps.empty() || !maps[0]) throw InputError("coil energy: no coil maps");
    const std::size_t n = maps[0]->size();
    Vector g = space.make(n), term = space.make(n);
    for (const Vector* s : maps) {
        if (!s || s->size() != n) throw InputError("coil energy: the coil maps differ in size");
        space.multiply(*s, *s, term, true);  // |S_c|^2
        space.axpy(1.0, term, g);
    }
    return g;
}

Vector coilEnergy(VectorSpace& space, const ComplexArray& maps, std::size_t voxels) {
    if (voxels == 0 || maps.empty() || maps.size() % voxels != 0)
        throw InputError("coil energy: " + std::to_string(maps.size()) + " map values do not fill whole coils of " +
                         std::to_string(voxels) + " voxels");
    ComplexArray g(voxels);
    const std::int64_t n = std::int64_t(voxels);
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t i = 0; i < n; ++i) {
        double sum = 0;
        for (std::size_t c = 0; c < maps.size() / voxels; ++c) sum += std::norm(maps[c * voxels + std::size_t(i)]);
        g[std::size_t(i)] = sum;
    }
    return space.fromHost(g);
}

SensePreconditioner::SensePreconditioner(Backend& backend, Vector coil_energy)
    : backend_(backend), energy_(std::move(coil_energy)) {
    // Formed where g lives (a GPU: nothing crosses to the host; it took about 85 ms at 128^3 there).
    const std::size_t n = energy_.size();
    inside_ = backend_.make(n);
    outside_ = backend_.make(n);
    largest_ = backend_.thresholdMasks(energy_, kInside, inside_, outside_);
    if (!(largest_ > 0)) throw InputError("SENSE preconditioner: the coil maps are zero everywhere");
    ones_ = backend_.make(n);
    backend_.combine({1.0, 1.0}, {&inside_, &outside_}, ones_);
}

LinearOperatorPtr SensePreconditioner::make(LinearOperatorPtr circulant, const Vector& data_eigenvalues,
                                            const Vector* penalty_eigenvalues, double weight, double exponent) const {
    const std::size_t n = energy_.size();
    if (!circulant || circulant->inSize() != n || data_eigenvalues.size() != n || (penalty_eigenvalues && penalty_eigenvalues->size() != n))
        throw InputError("SENSE preconditioner: the circulant does not match the coil maps' grid");
    if (!std::isfinite(weight) || weight < 0) throw InputError("SENSE preconditioner: the penalty weight is not a finite number >= 0");
    const double c_d = meanReal(backend_, ones_, data_eigenvalues);
    const double c_p = penalty_eigenvalues ? weight * meanReal(backend_, ones_, *penalty_eigenvalues) : 0.0;
    if (!(c_d + c_p > 0)) throw InputError("SENSE preconditioner: the circulant's diagonal is not positive");
    // D = (g c_d + w c_p) / (c_d + w c_p); its largest value from g's.
    Vector d = backend_.make(n);
    backend_.combine({c_d / (c_d + c_p), c_p / (c_d + c_p)}, {&energy_, &ones_}, d);
    const double d_max = (largest_ * c_d + c_p) / (c_d + c_p);
    // Inside: D^{-p/2} (inverseCirculantPower leaves d_max^{q-1} d^{-q}; its scale undone), zero outside.
    Vector scale = backend_.make(n), jacobi = backend_.make(n);
    backend_.copy(d, scale);
    backend_.inverseCirculantPower(scale, exponent / 2, 1e-6);
    backend_.scale(std::pow(d_max, 1 - exponent / 2), scale);
    backend_.multiply(inside_, scale, scale);
    // Outside: Jacobi's 1 / diag(A) = 1 / (D (c_d + w c_p)), zero inside.
    backend_.copy(d, jacobi);
    backend_.inverseCirculantPower(jacobi, 1, 1e-6);
    backend_.scale(1 / (c_d + c_p), jacobi);
    backend_.multiply(outside_, jacobi, jacobi);
    LinearOperatorPtr s = diagonal(backend_, std::move(scale), "SENSE preconditioner's D^{-p/2} inside");
    return sum(compose(s, compose(std::move(circulant), s)), diagonal(backend_, std::move(jacobi), "SENSE preconditioner's Jacobi outside"));
}

}  // namespace recon
