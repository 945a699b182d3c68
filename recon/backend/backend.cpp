#include <cstdio>

#include "recon/backend/backend.hpp"

namespace recon {

std::string BackendInfo::describe() const {
    std::string s = kind + " (" + device + ", " + toString(precision);
    if (memory_bytes) s += ", " + OutOfMemory::humanBytes(memory_bytes);
    return s + ")";
}

GriddingOptions trilinearGridding() {
    GriddingOptions o;
    o.kernel = SpreadKernelKind::Linear;
    o.oversampling = 1.0;
    o.width = 2;
    o.deapodize = false;
    return o;
}

GriddingOptions kaiserBesselGridding(double sigma, int width) {
    GriddingOptions o;
    o.kernel = SpreadKernelKind::KaiserBessel;
    o.oversampling = sigma;
    o.width = width;
    o.deapodize = true;
    return o;
}

std::shared_ptr<const BackendArray> Backend::adjointOnBackend(const Trajectory& t, const ComplexArray& c,
                                                             const SampleGrid& grid, const FourierMethod& method,
                                                             const Progress& progress) {
    ComplexArray out;
    adjointSum(t, c, grid, out, method, progress);
    return onHost(std::move(out));
}

BackendChoice parseBackendChoice(const std::string& s) {
    if (s == "auto") return BackendChoice::Auto;
    if (s == "cpu") return BackendChoice::Cpu;
    if (s == "cuda" || s == "gpu") return BackendChoice::Cuda;
    throw std::invalid_argument("unknown backend '" + s + "' (expected auto, cpu or cuda)");
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
