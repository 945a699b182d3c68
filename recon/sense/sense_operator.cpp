#include "recon/sense/sense_operator.hpp"

#include <algorithm>
#include <string>

#include "recon/core/errors.hpp"
#include "recon/linop/distributed_stack.hpp"

namespace recon {
namespace {

std::size_t checkedCoils(const ComplexArray& maps, std::size_t voxels, const std::string& what) {
    if (voxels == 0) throw InputError(what + ": the image has no voxels");
    if (maps.empty()) throw InputError(what + ": no coil maps were given");
    if (maps.size() % voxels != 0)
        throw InputError(what + ": the coil maps hold " + std::to_string(maps.size()) +
                         " values, not a whole number of images of " + std::to_string(voxels) + " voxels");
    return maps.size() / voxels;
}

Vector uploadCoil(VectorSpace& space, const ComplexArray& maps, std::size_t c, std::size_t voxels) {
    ComplexArray one(maps.begin() + std::ptrdiff_t(c * voxels), maps.begin() + std::ptrdiff_t((c + 1) * voxels));
    return space.fromHost(one);
}

}  // namespace

SenseOperator::SenseOperator(LinearOperatorPtr fourier, const ComplexArray& maps, std::shared_ptr<const ToeplitzOperator> kernel)
    : LinearOperator(fourier ? fourier->space() : throw InputError("SENSE: no Fourier operator"),
                     fourier->inSize(),
                     fourier->outSize() * checkedCoils(maps, fourier->inSize(), "SENSE"),
                     "SENSE (" + std::to_string(maps.size() / fourier->inSize()) + " coils) of " + fourier->name()),
      fourier_(std::move(fourier)), kernel_(std::move(kernel)) {
    if (kernel_ && (kernel_->inSize() != voxels() || &kernel_->space() != &space()))
        throw InputError("SENSE: the Toeplitz kernel of " + kernel_->grid().describe() +
                         " is not the normal of " + fourier_->name() + " on this backend");
    // One upload of every coil's map (one host conversion, one transfer), then a device copy per coil.
    const std::size_t coils = maps.size() / voxels();
    const Vector all = space().fromHost(maps);
    maps_.reserve(coils);
    for (std::size_t c = 0; c < coils; ++c) {
        maps_.push_back(space().make(voxels()));
        space().copyRange(all, c * voxels(), maps_.back(), 0, voxels());
    }
    for (const Vector& m : maps_) map_ptrs_.push_back(&m);
}

Vector SenseOperator::adjointFromCoilImages(const std::vector<const Vector*>& coil_adjoints) const {
    if (coil_adjoints.size() != maps_.size())
        throw InputError("SENSE right-hand side: " + std::to_string(maps_.size()) + " coil maps but " +
                         std::to_string(coil_adjoints.size()) + " coils of data");
    VectorSpace& s = space();
    Vector rhs = s.make(voxels());
    Vector& term = scratch(2, voxels());
    for (std::size_t c = 0; c < maps_.size(); ++c) {
        if (!coil_adjoints[c] || coil_adjoints[c]->size() != voxels())
            throw InputError("SENSE right-hand side: coil " + std::to_string(c) + "'s image has another size");
        s.multiply(maps_[c], *coil_adjoints[c], term, /*conjugate_d=*/true);
        s.axpy(1.0, term, rhs);
    }
    return rhs;
}

void SenseOperator::applyForward(const Vector& x, Vector& y) const {
    VectorSpace& s = space();
    Vector& weighted = scratch(0, voxels());
    Vector& coil_data = scratch(1, samplesPerCoil());
    for (std::size_t c = 0; c < maps_.size(); ++c) {
        s.multiply(maps_[c], x, weighted);
        fourier_->forward(weighted, coil_data);
        s.copyRange(coil_data, 0, y, c * samplesPerCoil(), samplesPerCoil());
    }
}

void SenseOperator::applyAdjoint(const Vector& y, Vector& x) const {
    VectorSpace& s = space();
    Vector& coil_data = scratch(1, samplesPerCoil());
    Vector& coil_image = scratch(2, voxels());
    s.zero(x);
    for (std::size_t c = 0; c < maps_.size(); ++c) {
        s.copyRange(y, c * samplesPerCoil(), coil_data, 0, samplesPerCoil());
        fourier_->adjoint(coil_data, coil_image);
        s.multiply(maps_[c], coil_image, coil_image, /*conjugate_d=*/true);
        s.axpy(1.0, coil_image, x);
    }
}

void SenseOperator::applyNormal(const Vector& x, Vector& y) const {
    // One Toeplitz product per coil, on the image grid: no pass over the samples.
    if (kernel_) return kernel_->coilSumNormal(map_ptrs_, x, y);
    VectorSpace& s = space();
    Vector& weighted = scratch(0, voxels());
    Vector& toeplitz_out = scratch(2, voxels());
    s.zero(y);
    for (std::size_t c = 0; c < maps_.size(); ++c) {
        s.multiply(maps_[c], x, weighted);
        fourier_->normal(weighted, toeplitz_out);
        s.multiply(maps_[c], toeplitz_out, toeplitz_out, /*conjugate_d=*/true);
        s.axpy(1.0, toeplitz_out, y);
    }
}

Vector senseAdjointFromCoilImages(VectorSpace& space, const std::vector<const Vector*>& coil_adjoints,
                                  const ComplexArray& maps) {
    if (coil_adjoints.empty() || !coil_adjoints[0]) throw InputError("SENSE right-hand side: no coil images");
    const std::size_t voxels = coil_adjoints[0]->size();
    const std::size_t coils = checkedCoils(maps, voxels, "SENSE right-hand side");
    if (coils != coil_adjoints.size())
        throw InputError("SENSE right-hand side: " + std::to_string(coils) + " coil maps but " +
                         std::to_string(coil_adjoints.size()) + " coils of data");
    Vector rhs = space.make(voxels), term = space.make(voxels);
    for (std::size_t c = 0; c < coils; ++c) {
        if (!coil_adjoints[c] || coil_adjoints[c]->size() != voxels)
            throw InputError("SENSE right-hand side: coil " + std::to_string(c) + "'s image has another size");
        Vector map = uploadCoil(space, maps, c, voxels);
        space.multiply(map, *coil_adjoints[c], term, /*conjugate_d=*/true);
        space.axpy(1.0, term, rhs);
    }
    return rhs;
}

LinearOperatorPtr splitSense(VectorSpace& home, const std::vector<SplitDevice>& devices, const ComplexArray& maps,
                             std::size_t voxels, const std::function<LinearOperatorPtr(Backend&)>& fourier_on) {
    const std::size_t coils = checkedCoils(maps, voxels, "SENSE split over devices");
    if (devices.empty()) throw InputError("SENSE split over devices: no devices");
    const std::size_t shares = std::min(devices.size(), coils);
    std::vector<StackPart> parts;
    for (std::size_t d = 0; d < shares; ++d) {
        if (!devices[d].backend) throw InputError("SENSE split over devices: " + devices[d].name + " has no backend");
        const std::size_t first = coils * d / shares, last = coils * (d + 1) / shares;
        const ComplexArray share(maps.begin() + std::ptrdiff_t(first * voxels), maps.begin() + std::ptrdiff_t(last * voxels));
        const std::string where = devices[d].name + " (coils " + std::to_string(first) + "-" + std::to_string(last - 1) + ")";
        parts.push_back({std::make_shared<const SenseOperator>(fourier_on(*devices[d].backend), share), where, devices[d].backend});
    }
    return distributedStack(home, std::move(parts));
}

}  // namespace recon
