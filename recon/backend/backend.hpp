// The one interface behind which the CPU and CUDA backends sit: a vector space,
// the Fourier sums (exact or NUFFT) and the Toeplitz normal operator with Q
// resident on the backend, and gridding. Host arrays cross it in
// complex<double>, x fastest; a backend works internally in its own precision.
// Physics (phi, density weights, lambda's scale) is applied by the callers in
// recon/session, once, so backends only evaluate plain sums.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "recon/backend/coil_field.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"
#include "recon/ct/projector.hpp"
#include "recon/gridding/gridding_options.hpp"
#include "recon/linop/linear_operator.hpp"

namespace recon {

// A way to evaluate the Fourier sums. `name` is one of the backend's methods():
// "direct" and "nufft" on every backend; the CUDA backend adds the paper's
// kernel versions ("base", "regalloc", "coalesce", "constmem", "fasttrig",
// "tune", "multi") and faster exact methods of its own.
struct FourierMethod {
    std::string name = "nufft";
    double tolerance = 1e-6;  // NUFFT's requested relative accuracy
    // "multi" (GPU.Multi): the CUDA devices its voxels are split over, repeats allowed (logical
    // devices of one GPU, each on a stream of its own); empty: every visible GPU once.
    std::vector<int> devices = {};
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
    double q_oversampling = 2.0;   // Q's NUFFT grid per axis of the 2N grid (for memory estimates)
    std::string describe() const;
};

// F^H F on the image grid through the Toeplitz embedding: the FFT of Q on the
// 2N grid, kept in the backend's memory (cuFFT layout on the GPU). As an
// operator it maps the image grid to itself (forward = adjoint = F^H F).
class ToeplitzOperator : public LinearOperator {
public:
    ToeplitzOperator(VectorSpace& space, const Grid& grid)
        : LinearOperator(space, grid.voxels(), grid.voxels(), "Toeplitz F^H F"), grid_(grid) {}
    const Grid& grid() const { return grid_; }
    // Q itself on the 2N grid (for saving and tests).
    virtual ComplexArray q() const = 0;
    // Q on the 2N grid as a vector of this operator's space (difference d at index d + N), for work
    // on Q where it lives (the circulant preconditioner's fold). The default uploads q().
    virtual Vector qVector() const;
    // y = sum_c conj(S_c) .* T (S_c .* x): SENSE's normal E^H E, this one kernel shared by every
    // coil. `maps`: one vector per coil, inSize() each. The default applies T coil by coil; a
    // backend may batch the coils (CUDA: one batched FFT over a chunk of coils, the maps'
    // products fused into the padding and the cropping). Sizes are checked (InputError).
    void coilSumNormal(const std::vector<const Vector*>& maps, const Vector& x, Vector& y) const;

protected:
    void applyAdjoint(const Vector& y, Vector& x) const override { applyForward(y, x); }  // Hermitian
    // coilSumNormal's work, its sizes checked; y is not x. The default: coil by coil.
    virtual void applyCoilSumNormal(const std::vector<const Vector*>& maps, const Vector& x, Vector& y) const;

private:
    Grid grid_;
};

// How a kernel on the grid `source` folds onto a circulant on the N grid `grid` (the circulant
// preconditioner's, recon/backend/circulant_preconditioner.hpp): along axis a, residue r < grid.n[a]
// gathers source index index[a][2r + j] with weight weight[a][2r + j], j < 2 (weight 0: nothing);
// axes beyond grid.dims have the one residue 0. c(r) = sum of the products of the axes' weights
// times the kernel at the gathered point. `nonnegative`: eigenvalues below 0 (rounding, for a
// positive semi-definite kernel) become 0.
struct CirculantFold {
    Grid grid, source;
    std::array<std::vector<int>, 3> index;
    std::array<std::vector<double>, 3> weight;
    bool nonnegative = false;
};

// A circulant's eigenvalues (real, N grid, FFT order) resident on a backend with what applying
// it needs there (the N grid's FFTs): made by Backend::circulantSpectrum.
class CirculantStorage {
public:
    virtual ~CirculantStorage() = default;
    virtual const Grid& grid() const = 0;
};

// A backend: a vector space (its memory and the vector operations solvers
// need), the Fourier sums and the Toeplitz kernel as operators resident in that
// memory, and gridding. Everything else — solvers, operators built from other
// operators, regularisers, SENSE, priors — is written once against this.
class Backend : public VectorSpace {
public:
    ~Backend() override = default;
    virtual BackendInfo info() const = 0;
    virtual std::vector<MethodInfo> methods() const = 0;
    virtual std::string defaultMethod() const = 0;
    // Bytes this backend can still allocate, checked against an estimate before a stage
    // allocates: the host's available memory (the default), a device's free memory; 0: unknown.
    virtual std::size_t availableMemory() const;

    // out_j = sum_m c_m exp(+i 2 pi k_m . x_j) on `grid` (the adjoint's sum).
    virtual void adjointSum(const Trajectory& t, const ComplexArray& c, const SampleGrid& grid,
                            ComplexArray& out, const FourierMethod& method, const Progress& progress = {}) = 0;
    // The adjoint sum left in the backend's memory, for a solve's right-hand side.
    // The default computes it on the host and uploads it.
    virtual std::shared_ptr<const Vector> adjointOnBackend(const Trajectory& t, const ComplexArray& c,
                                                           const SampleGrid& grid, const FourierMethod& method,
                                                           const Progress& progress = {});
    // The adjoint sums of several coils at once (`c`: coils x t.samples(), coil after coil), each
    // left in the backend's memory: F^H d of every coil for SENSE. The default calls
    // adjointOnBackend coil by coil; the CUDA backend uploads all coils in one transfer and runs
    // one NUFFT plan (its sort and spreading indices) over them. InputError on sizes.
    virtual std::vector<std::shared_ptr<const Vector>> adjointsOnBackend(const Trajectory& t, const ComplexArray& c, int coils,
                                                                         const SampleGrid& grid, const FourierMethod& method,
                                                                         const Progress& progress = {});
    // out_m = sum_j f_j exp(-i 2 pi k_m . x_j) (the forward sum).
    virtual void forwardSum(const Trajectory& t, const ComplexArray& f, const SampleGrid& grid,
                            ComplexArray& out, const FourierMethod& method, const Progress& progress = {}) = 0;
    // The plain sums as an operator on this backend's vectors: forward grid.points() ->
    // t.samples() (the forward sum), adjoint the adjoint sum. Physics (phi) is composed on by the caller.
    virtual LinearOperatorPtr fourierSums(const Trajectory& t, const SampleGrid& grid, const FourierMethod& method) = 0;
    // Q on grid.doubled() from per-sample weights |phi(k_m)|^2, FFT'd and kept.
    virtual std::shared_ptr<ToeplitzOperator> makeToeplitz(const Grid& grid, const Trajectory& t,
                                                           const std::vector<double>& phi2,
                                                           const FourierMethod& method,
                                                           const Progress& progress = {}) = 0;
    // The same kernel on this backend from a Q computed elsewhere (another backend or precision, a file).
    virtual std::shared_ptr<ToeplitzOperator> toeplitzFromQ(const Grid& grid, const ComplexArray& q) = 0;
    // `kernel` (made on this or another backend) copied onto this backend, e.g. for each device of a
    // split. The default goes through Q in host memory (kernel.q(), then toeplitzFromQ); the CUDA
    // backend copies another CUDA kernel's spectrum of its precision device to device (a peer copy).
    virtual std::shared_ptr<ToeplitzOperator> toeplitzCopy(const ToeplitzOperator& kernel);

    // Gridding: spread `weighted` (data already multiplied by density weights)
    // with `opts`' kernel, inverse FFT, crop, deapodise: an image on `grid`.
    virtual void grid(const Trajectory& t, const ComplexArray& weighted, const Grid& grid,
                      const GriddingOptions& opts, ComplexArray& image, const Progress& progress = {}) = 0;
    // Pipe-Menon density compensation: w <- w / (C C^T w), `iterations` times.
    virtual std::vector<double> densityCompensation(const Trajectory& t, const Grid& grid,
                                                    const GriddingOptions& opts, int iterations,
                                                    const Progress& progress = {}) = 0;

    // Circulants on the N grid (the circulant preconditioner's), computed and applied where the
    // vectors live. Eigenvalues are vectors of grid.voxels() values, real parts (imaginary 0), FFT
    // order. Arguments are checked here once for every backend (circulant_preconditioner.cpp); the
    // defaults below work in float64 on the host, the CUDA backend has kernels and cuFFT plans.
    // eig = FFT_N(c), c the kernel (a vector of fold.source.voxels()) folded as `fold` says.
    void circulantEigenvalues(const CirculantFold& fold, const Vector& kernel, Vector& eig);
    // In place: m <- m_max^{p-1} max(m, floor m_max)^{-p} (p = exponent in (0, 1], floor in (0, 1],
    // m_max the largest value): M^{-p} scaled by the largest eigenvalue. InputError where a value is
    // not finite or m_max <= 0.
    void inverseCirculantPower(Vector& m, double exponent, double floor);
    // `eig` kept on this backend with the N grid's FFTs, for circulantMultiply.
    std::shared_ptr<const CirculantStorage> circulantSpectrum(const Grid& grid, const Vector& eig);
    // y = IFFT_N(eig .* FFT_N(x)) / grid.voxels(): the circulant applied; y may be x.
    void circulantMultiply(const CirculantStorage& c, const Vector& x, Vector& y);
    // The SENSE preconditioner's split of the grid (recon/sense/sense_preconditioner.hpp), where the
    // maps' energy g is: inside = 1 where Re g > fraction g_max, else 0; outside = 1 - inside; g_max
    // (the largest of max(Re g, 0)) returned. InputError where a value is not finite, on sizes, or a
    // fraction outside [0, 1).
    double thresholdMasks(const Vector& g, double fraction, Vector& inside, Vector& outside);

protected:
    // The primitives above, their arguments checked. For applyInverseCirculantPower: m_max is
    // returned (0 where none is positive; NaN where a value is not finite) and m left as it is
    // unless m_max is positive and finite.
    virtual void applyCirculantEigenvalues(const CirculantFold& fold, const Vector& kernel, Vector& eig);
    virtual double applyInverseCirculantPower(Vector& m, double exponent, double floor);
    virtual std::shared_ptr<const CirculantStorage> makeCirculantSpectrum(const Grid& grid, const Vector& eig);
    virtual void applyCirculantMultiply(const CirculantStorage& c, const Vector& x, Vector& y);
    // thresholdMasks' work: g_max returned (NaN where a value is not finite: the masks then unspecified).
    virtual double applyThresholdMasks(const Vector& g, double fraction, Vector& inside, Vector& outside);

public:
    // The eigen-decomposition of A^H A for a dense complex matrix A (rows x cols, column-major),
    // in float64: `values` ascending, `vectors` (cols x cols, column-major) its eigenvectors as
    // columns; A's right singular vectors, sigma^2 the values (ESPIRiT's calibration matrix,
    // 6859 x 1728 for 8 coils in 3D). The default works on the host (Eigen); the CUDA backend
    // uses cuBLAS and cuSOLVER.
    virtual void gramEigen(const ComplexArray& a, std::size_t rows, std::size_t cols, std::vector<double>& values,
                           ComplexArray& vectors);

    // ESPIRiT's signal subspace: gramEigen's `values`, then `kept` = signalSubspaceSize(values,
    // threshold) and `projection` = V_k V_k^H (cols x cols, column-major) with V_k the eigenvectors
    // of the `kept` largest eigenvalues. The default multiplies on the host (Eigen); the CUDA
    // backend keeps the eigenvectors on the device (cuBLAS).
    virtual void gramProjection(const ComplexArray& a, std::size_t rows, std::size_t cols, double threshold,
                                std::vector<double>& values, std::size_t& kept, ComplexArray& projection);

    // gramProjection of ESPIRiT's calibration matrix given by its blocks. The default builds A and
    // calls gramProjection (the CUDA backend's Gram on the device); the CPU backend forms A^H A
    // from the blocks (calibrationGram) and never builds A.
    virtual void calibrationProjection(const CalibrationMatrix& m, double threshold, std::vector<double>& values,
                                       std::size_t& kept, ComplexArray& projection);

    // Per voxel, the largest eigenvalue of an n x n Hermitian matrix and its eigenvector (unit
    // norm, arbitrary phase): `upper` holds the upper triangles, pair (r, c), r <= c, as image
    // r n - r (r - 1) / 2 + c - r of `voxels` values (recon/sense's HermitianField); `vectors`
    // n x voxels, component after component. The coil maps' last step (ESPIRiT, Walsh). The
    // default runs Eigen per voxel on the host's cores; the CUDA backend a Jacobi solver per voxel.
    virtual void dominantEigenvectors(int n, std::size_t voxels, const ComplexArray& upper, ComplexArray& vectors,
                                      std::vector<double>& values, const Progress& progress = {});

    // The coil maps' image-domain steps (recon/backend/coil_field.hpp): the coils' low-resolution
    // images, the object, the Hermitian field and its dominant eigenpair inside the object. The
    // default builds the field in host memory and decomposes it with dominantEigenvectors; the
    // CUDA backend does it all on the device (the field never visits the host).
    virtual CoilFieldEigen coilFieldEigenvectors(const Grid& grid, const CoilField& field, const Progress& progress = {});

    // The CT projector (forward: line integrals of the volume, adjoint: backprojection) on this
    // backend's vectors. The default is the CPU's conventional distance-driven projector through
    // the host (ct::cpuDdProjector); a backend with its own kernels overrides it.
    virtual LinearOperatorPtr ctProjector(const ct::CtGeometry& geometry, const ct::ProjectorOptions& options);
};

// The MRI encoding operator F = diag(phi) * (the backend's Fourier sums) on `grid`,
// its normal F^H F through `normal` (the Toeplitz kernel of the same trajectory and phi).
LinearOperatorPtr fourierOperator(Backend& backend, const Trajectory& t, const Grid& grid, const std::vector<double>& phi,
                                  const FourierMethod& method, std::shared_ptr<const ToeplitzOperator> normal);


// Backend::gramProjection's work on the host from the Gram matrix A^H A itself (cols x cols,
// column-major; the lower triangle is read).
void hostGramProjection(const ComplexArray& gram, std::size_t cols, double threshold, std::vector<double>& values,
                        std::size_t& kept, ComplexArray& projection);

std::unique_ptr<Backend> createCpuBackend(Precision p, int threads = 0);
// Null (and *why set) when CUDA is not built in, no device is usable, or init fails.
std::unique_ptr<Backend> createCudaBackend(Precision p, int device, std::string* why);
bool cudaCompiledIn();
// CUDA devices visible to this process (0 without CUDA or a driver).
int cudaDeviceCount();
// Auto prefers CUDA and falls back to the CPU; *note says what happened.
std::unique_ptr<Backend> createBackend(BackendChoice c, Precision p, std::string* note);

}  // namespace recon
