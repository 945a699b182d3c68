// [A_1; A_2; ...; A_D] with each A_d resident on its own VectorSpace (a GPU, a
// logical GPU on its own stream, a CPU backend), seen from a `home` space as one
// operator: the solver on `home` is unchanged. Its normal is the sum of the parts'
// normals, sum_d A_d^H A_d x, each computed where its part lives, all parts at once
// (one thread per part), the partial results summed on `home`. For SENSE with the
// coils split over devices: each part is the SENSE operator of its coils, with its
// own copy of the one Toeplitz kernel (recon/sense/sense_operator.hpp).
//
// Vectors cross spaces by VectorSpace::pullFrom / pushTo (peer copies between GPUs)
// or through host memory where a backend has no direct path. A part that throws ends
// the application with an Error naming the part (`where`) after every other part has
// finished: no thread is left running and the operator stays usable.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "recon/linop/linear_operator.hpp"

namespace recon {

struct StackPart {
    LinearOperatorPtr op;  // lives on its own space (which may be `home`)
    std::string where;     // names the device in messages, e.g. "GPU 1"
    // What owns op's space (its backend), kept alive as long as the stack and released after
    // everything made on that space; null where the caller keeps the space alive.
    std::shared_ptr<const void> owner = nullptr;
};

// What the parts' communication cost, summed over the applications since the last reset.
struct DistributedStats {
    long applications = 0;
    // Per application, the slowest part's copies (x to it, its result back) plus the sum on
    // `home`: what the split adds to one application on a single device.
    double communication_seconds = 0;
    double seconds = 0;  // whole applications, as the caller waits for them
};

class DistributedStack final : public LinearOperator {
public:
    // Throws InputError for no parts, a missing operator, or parts of different input sizes.
    DistributedStack(VectorSpace& home, std::vector<StackPart> parts);
    ~DistributedStack() override;

    std::size_t parts() const;
    const std::string& where(std::size_t part) const;
    DistributedStats stats() const;
    void resetStats();
    // Test hook: part `part` throws in the `application`-th application from now (forward,
    // adjoint and normal alike); 0 turns it off.
    void failForTesting(std::size_t part, long application);

    // x (on home) = A^H y for y in host memory (outSize() values, the parts' rows one after another):
    // each part uploads its own rows to its device and applies its adjoint there, all at once, the
    // results summed on home. For a right-hand side such as SENSE's sum_c S_c^* F^H d_c: the
    // expensive F^H d of each coil runs on the device that owns the coil, and only one image per
    // device crosses to home.
    void adjointFromHost(std::span<const cdouble> y, Vector& x) const;

protected:
    void applyForward(const Vector& x, Vector& y) const override;
    void applyAdjoint(const Vector& y, Vector& x) const override;
    void applyNormal(const Vector& x, Vector& y) const override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// One part living on `home`: that operator itself (nothing to split); else a DistributedStack.
LinearOperatorPtr distributedStack(VectorSpace& home, std::vector<StackPart> parts);

// `to` (on to_space) = `from` (on from_space), issued on `self`'s queue (one of the two):
// a plain copy within one space, pullFrom/pushTo where the backend has a direct path, else
// through host memory. `from` must be finished on its space; `to` is complete on return.
void copyAcross(VectorSpace& self, VectorSpace& from_space, const Vector& from, VectorSpace& to_space, Vector& to);

}  // namespace recon
