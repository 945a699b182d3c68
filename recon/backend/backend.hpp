// The one interface behind which the CPU and CUDA backends sit. Everything heavy
// goes through it: the Fourier sums (exact or NUFFT), the Toeplitz normal
// operator with Q resident on the backend, the CG solve and gridding. Host arrays
// cross it in complex<double>, x fastest; a backend works internally in its own
// precision. Physics (phi, density weights, lambda's scale) is applied by the
// callers in recon/session, once, so backends only evaluate plain sums.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"
#include "recon/operators/regularizer.hpp"

namespace recon {

// A way to evaluate the Fourier sums. `name` is one of the backend's methods():
// "direct" and "nufft" on every backend; the CUDA backend adds the paper's
// kernel versions ("base", "regalloc", "coalesce", "constmem", "fasttrig",
// "tune", "multi") and faster exact methods of its own.
struct FourierMethod {
    std::string name = "nufft";
    double tolerance = 1e-6;  // NUFFT's requested relative accuracy
};

struct MethodInfo {
    std::string name;
    std::string description;
    bool exact = true;  // a direct sum (error = floating-point rounding only)
};

struct BackendInfo {
    std::string kind;          // "cpu" or "cuda"
    std::string device;        // "8 threads" / "NVIDIA H100 80GB HBM3 (sm_90)"
    Precision precision = Precision::Single;
    std::size_t memory_bytes = 0;  // device (or host) memory in total
    std::string describe() const;
};

// Kernel used to spread samples onto a grid: by the NUFFT (chosen from its
// tolerance) and by gridding (chosen by the user).
enum class SpreadKernelKind { KaiserBessel, ExpSemicircle, Linear };

struct GriddingOptions {
    SpreadKernelKind kernel = SpreadKernelKind::KaiserBessel;
    double oversampling = 2.0;  // sigma (1.0 for the seeds' trilinear gridding)
    int width = 4;              // kernel width W in oversampled cells
    bool deapodize = true;
};
GriddingOptions trilinearGridding();      // the seeds' baseline: sigma = 1, linear, no deapodisation
GriddingOptions kaiserBesselGridding(double sigma = 2.0, int width = 4);  // Beatty et al. 2005

// F^H F on the image grid through the Toeplitz embedding: the FFT of Q on the
// 2N grid, kept in the backend's memory (cuFFT layout on the GPU).
class ToeplitzKernel {
public:
    virtual ~ToeplitzKernel() = default;
    virtual const Grid& grid() const = 0;
    // y = F^H F x, host arrays of grid().voxels(); for tests and the CPU path.
    virtual void apply(const ComplexArray& x, ComplexArray& y) const = 0;
    // Q itself on the 2N grid (for saving and tests).
    virtual ComplexArray q() const = 0;
};

// An image-grid vector held in the backend's memory, so that F^H d stays where
// the solver runs between solves instead of crossing to the host and back (on a
// GPU at 128^3 that round trip costs more than computing it).
class BackendArray {
public:
    virtual ~BackendArray() = default;
    virtual std::size_t size() const = 0;
    virtual void toHost(ComplexArray& out) const = 0;
};

// Host memory as a BackendArray: what the CPU backend keeps, and how host data enter a solve.
class HostArray final : public BackendArray {
public:
    explicit HostArray(ComplexArray values) : values_(std::move(values)) {}
    std::size_t size() const override { return values_.size(); }
    void toHost(ComplexArray& out) const override { out = values_; }
    const ComplexArray& values() const { return values_; }

private:
    ComplexArray values_;
};
inline std::shared_ptr<const BackendArray> onHost(ComplexArray values) {
    return std::make_shared<HostArray>(std::move(values));
}

// One CG iteration's scalars, in the units of the cost
// ||F rho - d||^2 + lambda * s * ||W rho||^2.
struct IterationRecord {
    int iteration = 0;
    double residual = 0;        // ||b - A x|| / ||b||
    double data_term = 0;       // ||F rho - d||^2
    double penalty_term = 0;    // lambda * s * ||W rho||^2
    double cost() const { return data_term + penalty_term; }
    double seconds = 0;         // since the solve started (set by the runner)
    bool has_truth = false;
    double error_percent = 0;   // 100 ||rho - truth|| / ||truth||
    double psnr_db = 0;         // 20 log10(max|truth| / sqrt(MSE))
};

struct SolverSetup {
    std::shared_ptr<const ToeplitzKernel> toeplitz;  // from this backend
    std::shared_ptr<const BackendArray> rhs;         // F^H d (adjointOnBackend, or onHost(...))
    double data_norm2 = 0;                           // ||d||^2 (so the cost is absolute)
    std::shared_ptr<const Regularizer> regularizer;
    double lambda = 0;                               // user's lambda
    double lambda_scale = 1;                         // s (regularizationScale)
    const ComplexArray* initial = nullptr;           // warm start; zero when null
    const ComplexArray* truth = nullptr;             // for the error readout; may be null
};

// A CG solve resident on the backend. The caller owns the loop.
class IterativeSolver {
public:
    virtual ~IterativeSolver() = default;
    virtual bool step() = 0;                       // one CG iteration; false when nothing is left to do
    virtual IterationRecord record() const = 0;    // after the last step (iteration 0: the start)
    virtual void image(ComplexArray& out) const = 0;  // the current iterate, to host
    virtual void setLambda(double lambda) = 0;     // restart from the current iterate
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual BackendInfo info() const = 0;
    virtual std::vector<MethodInfo> methods() const = 0;
    virtual std::string defaultMethod() const = 0;

    // out_j = sum_m c_m exp(+i 2 pi k_m . x_j) on `grid` (the adjoint's sum).
    virtual void adjointSum(const Trajectory& t, const ComplexArray& c, const SampleGrid& grid,
                            ComplexArray& out, const FourierMethod& method, const Progress& progress = {}) = 0;
    // The adjoint sum left in the backend's memory, for a solve (SolverSetup::rhs).
    // The default keeps it on the host.
    virtual std::shared_ptr<const BackendArray> adjointOnBackend(const Trajectory& t, const ComplexArray& c,
                                                                 const SampleGrid& grid, const FourierMethod& method,
                                                                 const Progress& progress = {});
    // out_m = sum_j f_j exp(-i 2 pi k_m . x_j) (the forward sum).
    virtual void forwardSum(const Trajectory& t, const ComplexArray& f, const SampleGrid& grid,
                            ComplexArray& out, const FourierMethod& method, const Progress& progress = {}) = 0;
    // Q on grid.doubled() from per-sample weights |phi(k_m)|^2, FFT'd and kept.
    virtual std::shared_ptr<ToeplitzKernel> makeToeplitz(const Grid& grid, const Trajectory& t,
                                                         const std::vector<double>& phi2,
                                                         const FourierMethod& method,
                                                         const Progress& progress = {}) = 0;
    virtual std::unique_ptr<IterativeSolver> makeSolver(const SolverSetup& setup) = 0;

    // Gridding: spread `weighted` (data already multiplied by density weights)
    // with `opts`' kernel, inverse FFT, crop, deapodise: an image on `grid`.
    virtual void grid(const Trajectory& t, const ComplexArray& weighted, const Grid& grid,
                      const GriddingOptions& opts, ComplexArray& image, const Progress& progress = {}) = 0;
    // Pipe-Menon density compensation: w <- w / (C C^T w), `iterations` times.
    virtual std::vector<double> densityCompensation(const Trajectory& t, const Grid& grid,
                                                    const GriddingOptions& opts, int iterations,
                                                    const Progress& progress = {}) = 0;
};

enum class BackendChoice { Auto, Cpu, Cuda };
BackendChoice parseBackendChoice(const std::string& s);  // "auto" | "cpu" | "cuda"

std::unique_ptr<Backend> createCpuBackend(Precision p, int threads = 0);
// Null (and *why set) when CUDA is not built in, no device is usable, or init fails.
std::unique_ptr<Backend> createCudaBackend(Precision p, int device, std::string* why);
bool cudaCompiledIn();
// Auto prefers CUDA and falls back to the CPU; *note says what happened.
std::unique_ptr<Backend> createBackend(BackendChoice c, Precision p, std::string* note);

}  // namespace recon
