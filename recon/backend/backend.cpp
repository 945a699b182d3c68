#include <cstdio>

#include "recon/backend/backend.hpp"
#include "recon/core/host_memory.hpp"

namespace recon {

std::string BackendInfo::describe() const {
    std::string s = kind + " (" + device + ", " + toString(precision);
    if (memory_bytes) s += ", " + OutOfMemory::humanBytes(memory_bytes);
    return s + ")";
}

std::size_t Backend::availableMemory() const { return availableHostMemory(); }

std::shared_ptr<const Vector> Backend::adjointOnBackend(const Trajectory& t, const ComplexArray& c, const SampleGrid& grid,
                                                       const FourierMethod& method, const Progress& progress) {
    ComplexArray out;
    adjointSum(t, c, grid, out, method, progress);
    return std::make_shared<const Vector>(fromHost(out));
}

LinearOperatorPtr fourierOperator(Backend& backend, const Trajectory& t, const Grid& grid, const std::vector<double>& phi,
                                  const FourierMethod& method, std::shared_ptr<const ToeplitzOperator> normal) {
    if (phi.size() != t.samples())
        throw InputError("Fourier operator: " + std::to_string(phi.size()) + " values of phi for " + std::to_string(t.samples()) + " samples");
    LinearOperatorPtr f = compose(diagonal(backend, ComplexArray(phi.begin(), phi.end()), "phi"),
                                  backend.fourierSums(t, SampleGrid::image(grid), method));
    return normal ? withNormal(f, normal) : f;
}

std::shared_ptr<ToeplitzOperator> Backend::toeplitzCopy(const ToeplitzOperator& kernel) {
    return toeplitzFromQ(kernel.grid(), kernel.q());
}

LinearOperatorPtr Backend::ctProjector(const ct::CtGeometry& geometry, const ct::ProjectorOptions& options) {
    return ct::cpuDdProjector(*this, geometry, options);
}

std::unique_ptr<Backend> createBackend(BackendChoice c, Precision p, std::string* note) {
    std::string why;
    if (c != BackendChoice::Cpu) {
        if (auto b = createCudaBackend(p, 0, &why)) {
            if (note) *note = "using " + b->info().describe();
            return b;
        }
        if (c == BackendChoice::Cuda) throw Error("CUDA backend unavailable: " + why);
    }
    auto b = createCpuBackend(p);
    if (note) *note = (c == BackendChoice::Auto ? "no usable GPU (" + why + "); " : std::string()) + "using " + b->info().describe();
    return b;
}

}  // namespace recon
