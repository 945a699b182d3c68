// The CUDA backend: the Backend interface on one GPU (several for "multi"),
// in float32 or float64. Host arrays are converted to the working precision
// once at the boundary; F^H d, Q, the Toeplitz operator, CG, gridding and
// density compensation run on the device. Out of device memory: direct sums
// retry in smaller voxel chunks, anything else falls back to the CPU backend
// with a message on stderr.
#include "recon/cuda/cuda_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <type_traits>

#include "recon/core/host_memory.hpp"
#include "recon/cuda/ct_dd.hpp"
#include "recon/cuda/linalg.hpp"
#include "recon/cuda/circulant_kernels.hpp"
#include "recon/cuda/coil_eigen.hpp"
#include "recon/cuda/coil_field.hpp"
#include "recon/cuda/dense_eigen.hpp"
#include "recon/cuda/nufft_gpu.hpp"
#include "recon/cuda/prior_kernels.hpp"
#include "recon/cuda/tuning.hpp"
#include "recon/nufft/spread_kernel.hpp"
#include "recon/operators/regularizer.hpp"

namespace recon {
namespace cuda {

std::vector<MethodInfo> cudaMethods() {
    return {
        {"nufft", "GPU NUFFT: exp-semicircle spreading (bin-sorted atomics) on a 2x grid + cuFFT + deapodisation; "
                  "accuracy set by the tolerance",
         false},
        {"direct", "the best exact method on this backend (exact-fast)", true},
        {"exact-fast", "exact sum (ours): one SFU sin/cos per 32 voxels along x (16 in float64), a Chebyshev recurrence between", true},
        {"base", "paper GPU.Base: voxel and scan data in global memory, library sin/cos", true},
        {"regalloc", "paper GPU.RegAlloc: voxel data in registers", true},
        {"coalesce", "paper GPU.Coalesce: + coalesced scan-data layout", true},
        {"constmem", "paper GPU.ConstMem: + scan-data tiles in constant memory", true},
        {"fasttrig", "paper GPU.FastTrig: + hardware (SFU) sin/cos", true},
        {"tune", "paper GPU.Tune: + searched threads/block, tile and unroll (cached per GPU)", true},
        {"multi", "paper GPU.Multi: GPU.Tune with the voxels split over all visible GPUs", true},
        {"multi-exact-fast", "exact-fast with the voxels split over all visible GPUs (as GPU.Multi)", true},
    };
}

MethodSpec parseMethod(const std::string& name) {
    static const std::pair<const char*, DirectVersion> versions[] = {
        {"base", DirectVersion::Base},         {"regalloc", DirectVersion::RegAlloc},
        {"coalesce", DirectVersion::Coalesce}, {"constmem", DirectVersion::ConstMem},
        {"fasttrig", DirectVersion::FastTrig}, {"tune", DirectVersion::Tune},
        {"exact-fast", DirectVersion::ExactFast}, {"direct", DirectVersion::ExactFast},
    };
    if (name == "nufft") return {MethodKind::Nufft, DirectVersion::ExactFast};
    if (name == "multi") return {MethodKind::Multi, DirectVersion::Tune};
    if (name == "multi-exact-fast") return {MethodKind::Multi, DirectVersion::ExactFast};
    for (const auto& [n, v] : versions)
        if (name == n) return {MethodKind::Direct, v};
    std::string all;
    for (const auto& m : cudaMethods()) all += (all.empty() ? "" : ", ") + m.name;
    throw InputError("the CUDA backend has no Fourier method '" + name + "' (it has " + all + ")");
}

namespace {

template <class T>
std::vector<std::complex<T>> toWorking(const ComplexArray& a) {
    std::vector<std::complex<T>> r(a.size());
#pragma omp parallel for if (a.size() > 65536)
    for (std::int64_t i = 0; i < std::int64_t(a.size()); ++i) r[i] = std::complex<T>(T(a[i].real()), T(a[i].imag()));
    return r;
}

// Whole grids cross the host boundary through a pinned staging buffer (grow-only,
// one per host thread): PCIe speed instead of pageable copies, and the precision
// conversion runs on all cores.
class PinnedStaging {
public:
    ~PinnedStaging() {
        if (p_) cudaFreeHost(p_);
    }
    void* get(std::size_t bytes) {
        if (bytes > cap_) {
            if (p_) cudaFreeHost(p_);
            p_ = nullptr;
            cap_ = 0;
            if (cudaMallocHost(&p_, bytes) != cudaSuccess) {
                cudaGetLastError();
                throw OutOfMemory("pinned host staging buffer", bytes);
            }
            cap_ = bytes;
        }
        return p_;
    }

private:
    void* p_ = nullptr;
    std::size_t cap_ = 0;
};
thread_local PinnedStaging t_staging;

template <class T>
std::complex<T> working(cdouble v) {
    return {T(v.real()), T(v.imag())};
}
template <class T>
std::complex<T> working(double v) {
    return {T(v), T(0)};
}

// Q's NUFFT oversamples the 2N grid 1.5 times, not 2 (the CPU backend's choice): its FFT at 128^3
// is 384^3, not 512^3, and Q took 3.3 ms instead of 4.6 at the session's 1e-4 (5.3 at 1e-5) on an
// H100, with Q's error 3e-6 against float64 and the anatomical solve's PSNR unchanged (docs/GPU.md).
// The image grid's F^H d stays at 2: the same time there, and 2.7e-6 against 6.8e-6.
constexpr double kToeplitzNufftSigma = 1.5;

// `a`: complex or real host values (ComplexArray, std::vector<double>).
template <class T, class Host>
DeviceBuffer<std::complex<T>> uploadArray(const Host& a, cudaStream_t s, const char* what) {
    DeviceBuffer<std::complex<T>> d(std::max<std::size_t>(a.size(), 1), what, s);
    if (a.empty()) return d;
    auto* h = static_cast<std::complex<T>*>(t_staging.get(a.size() * sizeof(std::complex<T>)));
    // In pieces, so the conversion of one overlaps the transfer of the one before (the 8 coils' maps
    // at 128^3: 268 MB converted, 134 MB sent).
    constexpr std::size_t kPiece = std::size_t(1) << 22;
    for (std::size_t first = 0; first < a.size(); first += kPiece) {
        const std::int64_t end = std::int64_t(std::min(a.size(), first + kPiece));
#pragma omp parallel for if (end - std::int64_t(first) > 65536)
        for (std::int64_t i = std::int64_t(first); i < end; ++i) h[i] = working<T>(a[std::size_t(i)]);
        check(cudaMemcpyAsync(d.data() + first, h + first, (std::size_t(end) - first) * sizeof(std::complex<T>),
                              cudaMemcpyHostToDevice, s),
              what);
    }
    check(cudaStreamSynchronize(s), what);  // the staging buffer is reused
    return d;
}

template <class T>
void downloadArray(const DeviceBuffer<std::complex<T>>& d, std::size_t n, ComplexArray& out, cudaStream_t s) {
    if (n == 0) {
        out.clear();
        return;
    }
    auto* h = static_cast<std::complex<T>*>(t_staging.get(n * sizeof(std::complex<T>)));
    resizeForOverwrite(out, n);
    // In pieces, each converted on the host's cores while the next ones cross (an image at 128^3:
    // four pieces), as uploadArray does the other way.
    constexpr std::size_t kPiece = std::size_t(1) << 19;
    const std::size_t pieces = (n + kPiece - 1) / kPiece;
    std::vector<cudaEvent_t> crossed(pieces, nullptr);
    try {
        for (std::size_t k = 0; k < pieces; ++k) {
            const std::size_t first = k * kPiece, count = std::min(n - first, kPiece);
            check(cudaEventCreateWithFlags(&crossed[k], cudaEventDisableTiming), "download from the device");
            check(cudaMemcpyAsync(h + first, d.data() + first, count * sizeof(std::complex<T>), cudaMemcpyDeviceToHost, s),
                  "download from the device");
            check(cudaEventRecord(crossed[k], s), "download from the device");
        }
        for (std::size_t k = 0; k < pieces; ++k) {
            check(cudaEventSynchronize(crossed[k]), "download from the device");
            const std::int64_t first = std::int64_t(k * kPiece), end = std::int64_t(std::min(n, (k + 1) * kPiece));
#pragma omp parallel for if (end - first > 65536)
            for (std::int64_t i = first; i < end; ++i) out[std::size_t(i)] = cdouble(h[i].real(), h[i].imag());
        }
    } catch (...) {
        cudaStreamSynchronize(s);  // nothing left writing into the staging buffer
        for (cudaEvent_t e : crossed)
            if (e) cudaEventDestroy(e);
        throw;
    }
    for (cudaEvent_t e : crossed) cudaEventDestroy(e);
}

void checkSizes(const Trajectory& t, std::size_t values, const char* what) {
    if (t.k.size() % 3 != 0) throw InputError("trajectory has " + std::to_string(t.k.size()) + " coordinates, not a multiple of 3");
    if (values != t.samples())
        throw InputError(std::string(what) + ": " + std::to_string(values) + " values for " + std::to_string(t.samples()) +
                         " samples");
}

}  // namespace

std::uint64_t trajectoryFingerprint(const Trajectory& t) {
    constexpr std::uint64_t kBasis = 1469598103934665603ull, kPrime = 1099511628211ull;  // FNV-1a's
    constexpr std::size_t kLanes = 8, kBlock = std::size_t(1) << 16;
    const std::size_t n = t.k.size(), blocks = (n + kBlock - 1) / kBlock;
    std::vector<std::uint64_t> part(blocks);
#pragma omp parallel for if (blocks > 1)
    for (std::int64_t b = 0; b < std::int64_t(blocks); ++b) {
        std::uint64_t lane[kLanes];
        for (std::size_t l = 0; l < kLanes; ++l) lane[l] = kBasis + l;
        const std::size_t first = std::size_t(b) * kBlock, end = std::min(n, first + kBlock);
        for (std::size_t i = first; i < end; ++i) {
            std::uint64_t bits;
            std::memcpy(&bits, &t.k[i], sizeof bits);
            lane[i % kLanes] = (lane[i % kLanes] ^ bits) * kPrime;
        }
        std::uint64_t h = kBasis;
        for (std::uint64_t v : lane) h = (h ^ v) * kPrime;
        part[std::size_t(b)] = h;
    }
    std::uint64_t h = kBasis ^ n;
    for (std::uint64_t v : part) h = (h ^ v) * kPrime;
    return h;
}

// ---------------------------------------------------------------- Toeplitz

template <class T>
ToeplitzPlans<T>::ToeplitzPlans(const Grid& grid, ToeplitzFfts ffts, cudaStream_t stream) {
    const Grid big = grid.doubled();
    full = std::make_shared<const GpuFft<T>>(big.n, grid.dims, stream);
    if (ffts != ToeplitzFfts::Full && grid.dims >= 2)
        padded = std::make_shared<const PaddedFft<T>>(big.n, grid.dims, stream, ffts == ToeplitzFfts::Fused);
}

template <class T>
std::complex<T>* devicePointer(const Vector& x) {
    auto* s = dynamic_cast<DeviceStorage<T>*>(x.storage());
    if (!s) throw InputError("a vector of another backend or precision was given to the CUDA backend");
    return s->v.data();
}

template <class T>
CudaToeplitz<T>::CudaToeplitz(VectorSpace& space, const Grid& grid, DeviceBuffer<C>&& q, std::shared_ptr<Stream> stream,
                              ToeplitzFfts ffts, std::shared_ptr<const ToeplitzPlans<T>> plans)
    : ToeplitzOperator(space, grid), stream_(std::move(stream)) {
    const cudaStream_t st = stream_->get();
    const Grid big = grid.doubled();
    if (q.size() != big.voxels()) throw InputError("Q has " + std::to_string(q.size()) + " values, not " + big.describe());
    usePlans(ffts, std::move(plans));
    // Q holds difference d = j - N at index j; the circulant wants d at index d mod 2N.
    halfShift<T>(big_, q.data(), work_.data(), false, st);
    fft_->forward(work_.data());
    // q = work / L (the inverse FFT's 1/L, once), in one pass.
    const double inverseL = 1.0 / double(big.voxels());
    const C* transformed = work_.data();
    vecCombine<T>(1, &inverseL, &transformed, q.data(), big.voxels(), st);
    spectrum_ = std::move(q);
    check(cudaStreamSynchronize(st), "Toeplitz spectrum");
}

template <class T>
CudaToeplitz<T>::CudaToeplitz(VectorSpace& space, const CudaToeplitz& source, DeviceBuffer<C>&& spectrum,
                              std::shared_ptr<Stream> stream, std::shared_ptr<const ToeplitzPlans<T>> plans)
    : ToeplitzOperator(space, source.grid()), stream_(std::move(stream)) {
    if (spectrum.size() != source.spectrum_.size())
        throw InputError("Toeplitz spectrum copy: " + std::to_string(spectrum.size()) + " values, not " +
                         std::to_string(source.spectrum_.size()));
    usePlans(source.ffts(), std::move(plans));
    spectrum_ = std::move(spectrum);
}

template <class T>
void CudaToeplitz<T>::usePlans(ToeplitzFfts ffts, std::shared_ptr<const ToeplitzPlans<T>> plans) {
    n_ = grid().n;
    big_ = grid().doubled().n;
    work_ = DeviceBuffer<C>(grid().doubled().voxels(), "Toeplitz work grid", stream_->get());
    if (!plans) plans = std::make_shared<const ToeplitzPlans<T>>(grid(), ffts, stream_->get());
    fft_ = plans->full;
    padded_ = plans->padded;
}

template <class T>
void CudaToeplitz<T>::applyDevice(const C* x, C* y) const {
    if (everyAxisPruned()) return padded_->coilSumConvolve(n_, x, nullptr, 1, work_.data(), spectrum_.data(), false, y);
    if (padded_) {
        // The fused transform never reads the padding's second half along the slowest axis.
        toeplitzPad<T>(n_, big_, padded_->fused(), x, work_.data(), stream());
        padded_->convolve(work_.data(), spectrum_.data());
    } else {
        toeplitzPad<T>(n_, big_, false, x, work_.data(), stream());
        fft_->forward(work_.data());
        toeplitzMultiply<T>(spectrum_.data(), work_.data(), work_.size(), stream());
        fft_->inverse(work_.data());
    }
    toeplitzCrop<T>(n_, big_, work_.data(), y, stream());
}

template <class T>
void CudaToeplitz<T>::applyForward(const Vector& x, Vector& y) const {
    applyDevice(devicePointer<T>(x), devicePointer<T>(y));
}

template <class T>
void CudaToeplitz<T>::applyCoilSumNormal(const std::vector<const Vector*>& maps, const Vector& x, Vector& y) const {
    if (!padded_ || !padded_->fused() || batch_failed_) return ToeplitzOperator::applyCoilSumNormal(maps, x, y);
    const int coils = int(maps.size());
    const std::size_t half = padded_->halfSize();
    int chunk = std::min(coils, kMaxCoilBatch);
    if (coil_chunk_ > 0) {
        chunk = std::min(chunk, coil_chunk_);
    } else {
        if (auto_chunk_ == 0) {
            // Half the free memory; each coil: its half grid and as much again for cuFFT's work area.
            const std::size_t room = freeDeviceMemory() / 2 / (2 * half * sizeof(C));
            auto_chunk_ = int(std::clamp<std::size_t>(room, 1, std::size_t(kMaxCoilBatch)));
        }
        chunk = std::min(chunk, auto_chunk_);
    }
    try {
        if (coil_work_.size() < std::size_t(chunk) * half) {
            coil_work_ = DeviceBuffer<C>();  // the old one freed before the new one is allocated
            coil_work_ = DeviceBuffer<C>(std::size_t(chunk) * half, "SENSE coils' Toeplitz grids");
        }
        used_chunk_ = chunk;
        const C* px = devicePointer<T>(x);
        C* py = devicePointer<T>(y);
        std::vector<const C*> pm(static_cast<std::size_t>(coils));
        for (int c = 0; c < coils; ++c) pm[std::size_t(c)] = devicePointer<T>(*maps[std::size_t(c)]);
        for (int first = 0; first < coils; first += chunk) {
            const int k = std::min(chunk, coils - first);
            if (everyAxisPruned()) {
                padded_->coilSumConvolve(n_, px, pm.data() + first, k, coil_work_.data(), spectrum_.data(), first > 0, py);
                continue;
            }
            toeplitzPadCoils<T>(n_, big_, k, pm.data() + first, px, coil_work_.data(), half, stream());
            padded_->convolveBatch(coil_work_.data(), k, spectrum_.data());
            toeplitzCropCoils<T>(n_, big_, k, pm.data() + first, coil_work_.data(), half, first > 0, py, stream());
        }
    } catch (const OutOfMemory&) {
        // No room for the chunk's grids or its batched plan: coil by coil from now on (the default
        // zeroes y first, after whatever was queued).
        coil_work_ = DeviceBuffer<C>();
        batch_failed_ = true;
        used_chunk_ = 0;
        ToeplitzOperator::applyCoilSumNormal(maps, x, y);
    }
}

template <class T>
ComplexArray CudaToeplitz<T>::q() const {
    // spectrum = FFT(Kcirc) / L, so the unnormalised inverse FFT gives Kcirc back.
    vecCopy<T>(spectrum_.data(), work_.data(), work_.size(), stream());
    fft_->inverse(work_.data());
    DeviceBuffer<C> q(work_.size(), "Q");
    halfShift<T>(big_, work_.data(), q.data(), true, stream());
    check(cudaStreamSynchronize(stream()), "Q");
    ComplexArray out;
    downloadArray(q, q.size(), out, stream());
    return out;
}

template <class T>
Vector CudaToeplitz<T>::qVector() const {
    Vector q(std::make_unique<DeviceStorage<T>>(work_.size(), "Q", stream_));  // every value written below: not cleared first
    vecCopy<T>(spectrum_.data(), work_.data(), work_.size(), stream());
    fft_->inverse(work_.data());
    halfShift<T>(big_, work_.data(), devicePointer<T>(q), true, stream());
    return q;
}

// ---------------------------------------------------------------- circulants on the N grid

// A circulant's eigenvalues on the device, real, with the 1/voxels of the inverse FFT folded in,
// and the backend's cuFFT plan of its grid (shared by every circulant of that grid).
template <class T>
struct DeviceCirculant final : CirculantStorage {
    DeviceCirculant(const Grid& g, DeviceBuffer<T>&& e, std::shared_ptr<const GpuFft<T>> f)
        : grid_(g), eig(std::move(e)), fft(std::move(f)) {}
    const Grid& grid() const override { return grid_; }
    Grid grid_;
    DeviceBuffer<T> eig;
    std::shared_ptr<const GpuFft<T>> fft;
};

// ---------------------------------------------------------------- sparse matrices on the device

template <class T>
struct DeviceSparse final : SparseStorage {
    std::int64_t rows() const override { return a.rows; }
    std::int64_t cols() const override { return a.cols; }
    DeviceCsr<T> a;
};

template <class T>
DeviceCsr<T> uploadCsr(const CsrMatrix& a, cudaStream_t s) {
    DeviceCsr<T> d;
    d.rows = a.rows;
    d.cols = a.cols;
    d.row_ptr = DeviceBuffer<std::int64_t>(a.row_ptr.size(), "sparse matrix row pointers");
    d.col = DeviceBuffer<std::int32_t>(std::max<std::size_t>(a.col.size(), 1), "sparse matrix columns");
    d.val = DeviceBuffer<T>(std::max<std::size_t>(a.val.size(), 1), "sparse matrix values");
    std::vector<T> v(a.val.begin(), a.val.end());
    d.row_ptr.upload(a.row_ptr.data(), a.row_ptr.size(), s);
    if (!a.col.empty()) d.col.upload(a.col.data(), a.col.size(), s);
    if (!v.empty()) d.val.upload(v.data(), v.size(), s);
    check(cudaStreamSynchronize(s), "sparse matrix upload");
    return d;
}

// ---------------------------------------------------------------- GPU.Multi

template <class T>
void multiGpuAdjoint(const Trajectory& t, const std::vector<std::complex<T>>& c, const SampleGrid& grid,
                     std::vector<std::complex<T>>& out, std::vector<int> devices, const Progress& progress,
                     DirectVersion version) {
    if (devices.empty()) {
        devices.resize(std::size_t(deviceCount()));
        std::iota(devices.begin(), devices.end(), 0);
    }
    if (devices.empty()) throw Error("GPU.Multi: no CUDA device");
    // Shares proportional to each device's SFU throughput, in whole rows of x.
    std::vector<double> weight;
    for (int d : devices) weight.push_back(deviceProps(d).sfuBoundPairsPerSecond());
    const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
    const std::size_t rows = grid.points() / std::size_t(grid.size[0]);
    std::vector<std::size_t> bounds{0};
    double acc = 0;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        acc += weight[i];
        bounds.push_back(i + 1 == devices.size() ? grid.points()
                                                 : std::size_t(std::llround(rows * acc / total)) * grid.size[0]);
    }
    out.assign(grid.points(), {});
    std::vector<std::exception_ptr> errors(devices.size());
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        workers.emplace_back([&, i] {
            try {
                DeviceGuard guard(devices[i]);
                Stream stream;
                const std::size_t b = bounds[i], e = bounds[i + 1];
                if (b >= e) return;
                const TuneParams tp = version == DirectVersion::Tune ? tunedParams<T>(devices[i]).best : TuneParams{};
                DirectSum<T> sum(t, grid, stream.get());
                DeviceBuffer<std::complex<T>> dc(std::max<std::size_t>(c.size(), 1), "GPU.Multi samples");
                DeviceBuffer<std::complex<T>> dout(e - b, "GPU.Multi output");
                if (!c.empty()) dc.upload(c.data(), c.size(), stream.get());
                // Only the first worker reports progress (the shares finish together).
                sum.adjoint(version, dc.data(), dout.data(), tp, b, e, i == 0 ? progress : Progress{});
                dout.download(out.data() + b, e - b, stream.get());
            } catch (...) {
                errors[i] = std::current_exception();
            }
        });
    }
    for (auto& w : workers) w.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

template void multiGpuAdjoint<float>(const Trajectory&, const std::vector<std::complex<float>>&, const SampleGrid&,
                                     std::vector<std::complex<float>>&, std::vector<int>, const Progress&, DirectVersion);
template void multiGpuAdjoint<double>(const Trajectory&, const std::vector<std::complex<double>>&, const SampleGrid&,
                                      std::vector<std::complex<double>>&, std::vector<int>, const Progress&, DirectVersion);

// ---------------------------------------------------------------- the backend

namespace {

// The plain Fourier sums on device vectors: a NUFFT plan (made on first use, kept)
// or one of the exact kernels.
template <class T>
class CudaFourierSums final : public LinearOperator {
public:
    using C = std::complex<T>;
    CudaFourierSums(VectorSpace& space, const Trajectory& t, const SampleGrid& g, MethodSpec spec, double tolerance,
                    std::shared_ptr<Stream> stream, int device)
        : LinearOperator(space, g.points(), t.samples(), spec.kind == MethodKind::Nufft ? "Fourier sums (GPU NUFFT)"
                                                                                           : "Fourier sums (GPU exact)"),
          t_(t), g_(g), spec_(spec), tolerance_(tolerance), stream_(std::move(stream)), device_(device) {
        if (spec_.kind == MethodKind::Multi) spec_.kind = MethodKind::Direct;  // one device per operator
    }

private:
    void applyForward(const Vector& x, Vector& y) const override {
        DeviceGuard g(device_);
        if (spec_.kind == MethodKind::Nufft)
            plan().forward(devicePointer<T>(x), devicePointer<T>(y));
        else
            DirectSum<T>(t_, g_, stream_->get()).forward(spec_.version, devicePointer<T>(x), devicePointer<T>(y));
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        DeviceGuard g(device_);
        if (spec_.kind == MethodKind::Nufft) {
            plan().adjoint(devicePointer<T>(y), devicePointer<T>(x));
        } else {
            TuneParams tp;
            if (spec_.version == DirectVersion::Tune) tp = tunedParams<T>(device_).best;
            DirectSum<T>(t_, g_, stream_->get()).adjoint(spec_.version, devicePointer<T>(y), devicePointer<T>(x), tp, 0, g_.points());
        }
    }
    GpuNufft<T>& plan() const {
        if (!plan_) plan_ = std::make_unique<GpuNufft<T>>(t_, g_, SpreadKernel::forTolerance(tolerance_), true, stream_->get());
        return *plan_;
    }
    Trajectory t_;
    SampleGrid g_;
    MethodSpec spec_;
    double tolerance_;
    std::shared_ptr<Stream> stream_;
    int device_;
    mutable std::unique_ptr<GpuNufft<T>> plan_;
};

template <class T>
class CudaBackend final : public Backend {
public:
    using C = std::complex<T>;

    explicit CudaBackend(int device) : device_(device), props_(deviceProps(device)) {
        DeviceGuard g(device_);
        stream_ = std::make_shared<Stream>();
    }

    BackendInfo info() const override {
        BackendInfo i;
        i.kind = "cuda";
        i.device = props_.describe();
        i.precision = std::is_same_v<T, float> ? Precision::Single : Precision::Double;
        i.memory_bytes = props_.memory_bytes;
        i.q_oversampling = kToeplitzNufftSigma;
        return i;
    }
    std::vector<MethodInfo> methods() const override { return cudaMethods(); }
    // The device's free memory (cudaMemGetInfo), not the tests' cap: with a cap the solve still
    // reaches each allocation and falls back from there (CudaOutOfMemory).
    std::size_t availableMemory() const override {
        DeviceGuard g(device_);
        return freeDeviceMemory();
    }

    // ------------------------------------------------------------ the vector space (one stream)
    Vector make(std::size_t n) override {
        DeviceGuard g(device_);
        auto v = std::make_unique<DeviceStorage<T>>(n, "vector", stream_);
        vecZero<T>(v->v.data(), n, s());
        return Vector(std::move(v));
    }
    void upload(const ComplexArray& host, Vector& v) override {
        DeviceGuard g(device_);
        if (v.size() != host.size()) throw InputError("upload: " + std::to_string(host.size()) + " values into a vector of " + std::to_string(v.size()));
        auto d = uploadArray<T>(host, s(), "upload");
        vecCopy<T>(d.data(), devicePointer<T>(v), host.size(), s());
        check(cudaStreamSynchronize(s()), "upload");  // d is freed on return
    }
    void download(const Vector& v, ComplexArray& host) override {
        DeviceGuard g(device_);
        downloadArray(dynamic_cast<DeviceStorage<T>&>(*v.storage()).v, v.size(), host, s());
    }
    void copy(const Vector& from, Vector& to) override {
        DeviceGuard g(device_);
        if (from.size() != to.size()) throw InputError("copy: vectors of different lengths");
        vecCopy<T>(devicePointer<T>(from), devicePointer<T>(to), from.size(), s());
    }
    void copyRange(const Vector& from, std::size_t fo, Vector& to, std::size_t to_offset, std::size_t count) override {
        DeviceGuard g(device_);
        if (fo + count > from.size() || to_offset + count > to.size()) throw InputError("copyRange: the range lies outside a vector");
        vecCopy<T>(devicePointer<T>(from) + fo, devicePointer<T>(to) + to_offset, count, s());
    }
    void zero(Vector& v) override {
        DeviceGuard g(device_);
        vecZero<T>(devicePointer<T>(v), v.size(), s());
    }
    void scale(cdouble a, Vector& y) override {
        DeviceGuard g(device_);
        vecScaleComplex<T>(a, devicePointer<T>(y), y.size(), s());
    }
    void axpy(double a, const Vector& x, Vector& y) override {
        DeviceGuard g(device_);
        vecAxpy<T>(a, devicePointer<T>(x), devicePointer<T>(y), y.size(), s());
    }
    void xpby(const Vector& x, double b, Vector& y) override {
        DeviceGuard g(device_);
        vecXpby<T>(devicePointer<T>(x), b, devicePointer<T>(y), y.size(), s());
    }
    void combine(const std::vector<double>& w, const std::vector<const Vector*>& xs, Vector& y) override {
        DeviceGuard g(device_);
        // kMaxCombine terms per launch; the rest are added on.
        for (std::size_t first = 0; first < xs.size(); first += kMaxCombine) {
            const int k = int(std::min<std::size_t>(kMaxCombine, xs.size() - first));
            std::vector<const C*> p;
            std::vector<double> wk(w.begin() + std::ptrdiff_t(first), w.begin() + std::ptrdiff_t(first) + k);
            for (int j = 0; j < k; ++j) p.push_back(devicePointer<T>(*xs[first + std::size_t(j)]));
            if (first == 0) {
                vecCombine<T>(k, wk.data(), p.data(), devicePointer<T>(y), y.size(), s());
            } else {
                for (int j = 0; j < k; ++j) vecAxpy<T>(wk[std::size_t(j)], p[std::size_t(j)], devicePointer<T>(y), y.size(), s());
            }
        }
    }
    void multiply(const Vector& d, const Vector& x, Vector& y, bool conjugate_d) override {
        DeviceGuard g(device_);
        if (d.size() != x.size() || y.size() != x.size()) throw InputError("multiply: vectors of different lengths");
        vecMultiply<T>(devicePointer<T>(d), devicePointer<T>(x), devicePointer<T>(y), conjugate_d, x.size(), s());
    }
    cdouble dot(const Vector& a, const Vector& b) override {
        DeviceGuard g(device_);
        return reductions().template dot<T>(devicePointer<T>(a), devicePointer<T>(b), a.size(), s());
    }
    std::vector<cdouble> dots(const Vector& a, const std::vector<const Vector*>& bs) override {
        DeviceGuard g(device_);
        std::vector<cdouble> out(bs.size());
        for (std::size_t first = 0; first < bs.size(); first += kMaxDots) {
            const int count = int(std::min<std::size_t>(kMaxDots, bs.size() - first));
            std::vector<const C*> p;
            for (int k = 0; k < count; ++k) p.push_back(devicePointer<T>(*bs[first + std::size_t(k)]));
            reductions().template dots<T>(devicePointer<T>(a), p.data(), count, a.size(), out.data() + first, s());
        }
        return out;
    }
    std::vector<cdouble> dotPairs(const std::vector<VectorPair>& pairs) override {
        DeviceGuard g(device_);
        std::vector<cdouble> out(pairs.size());
        for (const auto& [a, b] : pairs)
            if (a->size() != b->size() || a->size() != pairs.front().first->size())
                throw InputError("dotPairs: vectors of different lengths");
        for (std::size_t first = 0; first < pairs.size(); first += kMaxDots) {
            const int count = int(std::min<std::size_t>(kMaxDots, pairs.size() - first));
            std::vector<const C*> pa, pb;
            for (int k = 0; k < count; ++k) {
                pa.push_back(devicePointer<T>(*pairs[first + std::size_t(k)].first));
                pb.push_back(devicePointer<T>(*pairs[first + std::size_t(k)].second));
            }
            reductions().template dotPairs<T>(pa.data(), pb.data(), count, pairs.front().first->size(), out.data() + first, s());
        }
        return out;
    }
    double axpyNorm2(double a, const Vector& x, Vector& y) override {
        DeviceGuard g(device_);
        return reductions().template axpyNorm2<T>(a, devicePointer<T>(x), devicePointer<T>(y), y.size(), s());
    }
    void groupSoftThreshold(const Vector& x, std::size_t group, double t, Vector& y) override {
        DeviceGuard g(device_);
        const std::size_t stride = groupStride(x.size(), group, "groupSoftThreshold");
        if (y.size() != x.size()) throw InputError("groupSoftThreshold: vectors of different lengths");
        if (!(t >= 0) || !std::isfinite(t)) throw InputError("groupSoftThreshold: the threshold must be a finite number >= 0");
        vecGroupSoftThreshold<T>(devicePointer<T>(x), group, stride, t, devicePointer<T>(y), s());
    }
    double groupNorm1(const Vector& x, std::size_t group) override {
        DeviceGuard g(device_);
        const std::size_t stride = groupStride(x.size(), group, "groupNorm1");
        return reductions().template groupNorm1<T>(devicePointer<T>(x), group, stride, s());
    }
    std::shared_ptr<const SparseStorage> uploadSparse(const CsrMatrix& a) override {
        DeviceGuard g(device_);
        auto d = std::make_shared<DeviceSparse<T>>();
        d->a = uploadCsr<T>(a, s());
        return d;
    }
    void sparseMultiply(const SparseStorage& a, const Vector& x, Vector& y) override {
        DeviceGuard g(device_);
        const auto* m = dynamic_cast<const DeviceSparse<T>*>(&a);
        if (!m) throw InputError("a sparse matrix of another backend was given to the CUDA backend");
        if (x.size() != std::size_t(m->a.cols) || y.size() != std::size_t(m->a.rows))
            throw InputError("sparse product: the vectors do not match the matrix");
        csrMultiply<T>(m->a, devicePointer<T>(x), devicePointer<T>(y), s());
    }
    void synchronize() override {
        DeviceGuard g(device_);
        check(cudaStreamSynchronize(s()), "synchronize");
    }

protected:
    void applyGradient(const Grid& grid, const Vector* weights, Product p, const Vector& x, Vector& y) override {
        DeviceGuard g(device_);
        gradientStencil<T>(grid.n, grid.dims, weights ? devicePointer<T>(*weights) : nullptr, p, devicePointer<T>(x),
                           devicePointer<T>(y), s());
    }
    void applyWaveletLevel(const Grid& grid, int axis, const std::array<int, 3>& box, const std::array<int, 3>& extent,
                           const std::vector<double>& lowpass, bool inverse, const Vector& x, Vector& y) override {
        DeviceGuard g(device_);
        waveletLevelStencil<T>(grid.n, axis, box, extent, lowpass, inverse, devicePointer<T>(x), devicePointer<T>(y), s());
    }
    void applyHaarShrink(const Grid& grid, const std::array<int, 3>& splits, std::size_t offset, double t, const Vector& x,
                         Vector& y) override {
        DeviceGuard g(device_);
        haarShrinkTiles<T>(grid.n, splits, offset, t, devicePointer<T>(x), devicePointer<T>(y), s());
    }
    double applyHaarNorm1(const Grid& grid, const std::array<int, 3>& splits, const std::vector<std::size_t>& offsets,
                          const Vector& x) override {
        DeviceGuard g(device_);
        return haarNorm1Tiles<T>(grid.n, splits, offsets, devicePointer<T>(x), haar_partial_, s());
    }

    // The circulant preconditioner's primitives: Q folded, transformed and M^{-p} formed and applied
    // on the device; one cuFFT plan per N grid, kept (a lambda change makes no plan).
    void applyCirculantEigenvalues(const CirculantFold& f, const Vector& kernel, Vector& eig) override {
        DeviceGuard g(device_);
        std::vector<int> index;
        std::vector<double> weight;
        std::array<int, 3> offset{};
        for (int a = 0; a < 3; ++a) {
            offset[std::size_t(a)] = int(index.size());
            index.insert(index.end(), f.index[std::size_t(a)].begin(), f.index[std::size_t(a)].end());
            weight.insert(weight.end(), f.weight[std::size_t(a)].begin(), f.weight[std::size_t(a)].end());
        }
        DeviceBuffer<int> dindex(index.size(), "circulant fold table");
        DeviceBuffer<double> dweight(weight.size(), "circulant fold table");
        dindex.upload(index.data(), index.size(), s());
        dweight.upload(weight.data(), weight.size(), s());
        const std::array<int, 3> n{f.grid.n[0], f.grid.dims > 1 ? f.grid.n[1] : 1, f.grid.dims > 2 ? f.grid.n[2] : 1};
        circulantFold<T>(n, f.source.n, offset, dindex.data(), dweight.data(), devicePointer<T>(kernel), devicePointer<T>(eig), s());
        gridFft(f.grid)->forward(devicePointer<T>(eig));
        keepRealPart<T>(devicePointer<T>(eig), eig.size(), f.nonnegative, s());
        check(cudaStreamSynchronize(s()), "circulant eigenvalues");  // the tables are freed on return
    }
    double applyInverseCirculantPower(Vector& m, double exponent, double floor) override {
        DeviceGuard g(device_);
        const double largest = largestRealPart<T>(devicePointer<T>(m), m.size(), s());
        if (std::isfinite(largest) && largest > 0)
            inverseCirculantPowerKernel<T>(devicePointer<T>(m), m.size(), largest, exponent, floor, s());
        return largest;
    }
    double applyThresholdMasks(const Vector& gv, double fraction, Vector& inside, Vector& outside) override {
        DeviceGuard g(device_);
        const double largest = largestRealPart<T>(devicePointer<T>(gv), gv.size(), s());
        if (std::isfinite(largest))
            cuda::thresholdMasks<T>(devicePointer<T>(gv), gv.size(), fraction * largest, devicePointer<T>(inside), devicePointer<T>(outside), s());
        return largest;
    }
    std::shared_ptr<const CirculantStorage> makeCirculantSpectrum(const Grid& grid, const Vector& eig) override {
        DeviceGuard g(device_);
        DeviceBuffer<T> re(eig.size(), "circulant spectrum");
        scaledRealPart<T>(devicePointer<T>(eig), 1.0 / double(eig.size()), re.data(), eig.size(), s());
        return std::make_shared<DeviceCirculant<T>>(grid, std::move(re), gridFft(grid));
    }
    void applyCirculantMultiply(const CirculantStorage& c, const Vector& x, Vector& y) override {
        DeviceGuard g(device_);
        const auto* d = dynamic_cast<const DeviceCirculant<T>*>(&c);
        if (!d) throw InputError("a circulant of another backend or precision was given to the CUDA backend");
        if (x.storage() != y.storage()) vecCopy<T>(devicePointer<T>(x), devicePointer<T>(y), x.size(), s());
        d->fft->forward(devicePointer<T>(y));
        vecMultiplyReal<T>(d->eig.data(), devicePointer<T>(y), devicePointer<T>(y), y.size(), s());
        d->fft->inverse(devicePointer<T>(y));
    }

public:
    // Between two CUDA backends of this precision: a peer copy (a device-to-device copy when
    // both are the same GPU on two streams), on this backend's stream.
    bool pullFrom(VectorSpace& other, const Vector& theirs, Vector& mine) override {
        auto* o = dynamic_cast<CudaBackend<T>*>(&other);
        if (!o) return false;
        peerCopy(o->device_, devicePointer<T>(theirs), device_, devicePointer<T>(mine), mine.size(), "peer copy in");
        // Their later work (a stream-ordered free of `theirs` among it) waits for this copy.
        DeviceGuard g(device_);
        cudaEvent_t copied = nullptr;
        check(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming), "peer copy in");
        const cudaError_t recorded = cudaEventRecord(copied, s());
        const cudaError_t waited = recorded == cudaSuccess ? cudaStreamWaitEvent(o->s(), copied, 0) : recorded;
        cudaEventDestroy(copied);
        check(waited, "peer copy in");
        return true;
    }
    bool pushTo(const Vector& mine, VectorSpace& other, Vector& theirs) override {
        auto* o = dynamic_cast<CudaBackend<T>*>(&other);
        if (!o) return false;
        peerCopy(device_, devicePointer<T>(mine), o->device_, devicePointer<T>(theirs), mine.size(), "peer copy out");
        check(cudaStreamSynchronize(s()), "peer copy out");
        return true;
    }
    // The NUFFT at its default tolerance (1e-6) is orders of magnitude faster than any exact
    // sum and its error (~1e-6 relative, measured in the benchmark) is far below what an image shows.
    std::string defaultMethod() const override { return "nufft"; }

    void adjointSum(const Trajectory& t, const ComplexArray& c, const SampleGrid& g, ComplexArray& out,
                    const FourierMethod& m, const Progress& progress) override {
        checkSizes(t, c.size(), "adjoint sum");
        withCpuFallback("adjoint sum", [&] {
            DeviceBuffer<C> d = adjointDevice(t, c, g, m, progress);
            downloadArray(d, g.points(), out, s());
        }, [&](Backend& cpu) { cpu.adjointSum(t, c, g, out, cpuMethod(m), progress); });
    }

    // Out of device memory here is the caller's to handle (an F^H d in host memory cannot serve a device solve).
    std::shared_ptr<const Vector> adjointOnBackend(const Trajectory& t, const ComplexArray& c, const SampleGrid& g,
                                                   const FourierMethod& m, const Progress& progress) override {
        checkSizes(t, c.size(), "adjoint sum");
        return std::make_shared<const Vector>(std::make_unique<DeviceStorage<T>>(adjointDevice(t, c, g, m, progress), stream_));
    }

    // Every coil's NUFFT adjoint from one upload (converted on the host's cores) with the one
    // cached plan, one synchronisation at the end; the exact sums coil by coil (the default).
    std::vector<std::shared_ptr<const Vector>> adjointsOnBackend(const Trajectory& t, const ComplexArray& c, int coils,
                                                                 const SampleGrid& g, const FourierMethod& m,
                                                                 const Progress& progress) override {
        const std::size_t samples = t.samples();
        if (coils < 1 || c.size() != std::size_t(coils) * samples || parseMethod(m.name).kind != MethodKind::Nufft)
            return Backend::adjointsOnBackend(t, c, coils, g, m, progress);
        checkSizes(t, samples, "adjoint sums");
        DeviceGuard dg(device_);
        progress.update(0.0);
        GpuNufft<T>& plan = nufftPlan(t, g, SpreadKernel::forTolerance(m.tolerance), true);
        // Coil k converted on the host's cores while the device sums coil k - 1.
        DeviceBuffer<C> dc(c.size(), "adjoint-sum input (every coil)", s());
        auto* h = static_cast<C*>(t_staging.get(c.size() * sizeof(C)));
        std::vector<DeviceBuffer<C>> images;  // allocated first: an allocation may wait for the device
        for (int k = 0; k < coils; ++k) images.emplace_back(g.points(), "adjoint-sum output", s());
        for (int k = 0; k < coils; ++k) {
            const std::int64_t first = std::int64_t(std::size_t(k) * samples), end = first + std::int64_t(samples);
#pragma omp parallel for if (samples > 65536)
            for (std::int64_t i = first; i < end; ++i) h[i] = C(T(c[std::size_t(i)].real()), T(c[std::size_t(i)].imag()));
            check(cudaMemcpyAsync(dc.data() + first, h + first, samples * sizeof(C), cudaMemcpyHostToDevice, s()),
                  "adjoint-sum input");
            plan.adjoint(dc.data() + first, images[std::size_t(k)].data());
        }
        std::vector<std::shared_ptr<const Vector>> out;
        for (auto& image : images) out.push_back(std::make_shared<const Vector>(std::make_unique<DeviceStorage<T>>(std::move(image), stream_)));
        check(cudaStreamSynchronize(s()), "NUFFT adjoints");
        progress.update(1.0);
        return out;
    }

    // cuBLAS and cuSOLVER in float64 whatever the working precision (the maps' null space lies
    // 1e-6 below the largest eigenvalue); the host's Eigen when the device has no room.
    void gramEigen(const ComplexArray& a, std::size_t rows, std::size_t cols, std::vector<double>& values,
                   ComplexArray& vectors) override {
        withCpuFallback("calibration matrix eigen-decomposition", [&] {
            DeviceGuard dg(device_);
            cuda::gramEigen(a, rows, cols, values, vectors, s());
        }, [&](Backend& cpu) { cpu.gramEigen(a, rows, cols, values, vectors); });
    }

    // The same, with the signal subspace's projection formed on the device (cuBLAS).
    void gramProjection(const ComplexArray& a, std::size_t rows, std::size_t cols, double threshold,
                        std::vector<double>& values, std::size_t& kept, ComplexArray& projection) override {
        withCpuFallback("calibration matrix eigen-decomposition", [&] {
            DeviceGuard dg(device_);
            cuda::gramProjection(a, rows, cols, threshold, values, kept, projection, s());
        }, [&](Backend& cpu) { cpu.gramProjection(a, rows, cols, threshold, values, kept, projection); });
    }

    // The whole field on the device, float64 (n <= kMaxEigenCoils; more coils: the host's path).
    CoilFieldEigen coilFieldEigenvectors(const Grid& grid, const CoilField& field, const Progress& progress) override {
        if (field.coils < 1 || field.coils > kMaxEigenCoils) return Backend::coilFieldEigenvectors(grid, field, progress);
        CoilFieldEigen out;
        withCpuFallback("coil maps' field", [&] {
            DeviceGuard dg(device_);
            out = cuda::coilFieldEigenvectors(grid, field, s(), progress);
        }, [&](Backend& cpu) { out = cpu.coilFieldEigenvectors(grid, field, progress); });
        return out;
    }

    // A Jacobi solver per voxel in float64 (n <= kMaxEigenCoils; more coils: the host's cores).
    void dominantEigenvectors(int n, std::size_t voxels, const ComplexArray& upper, ComplexArray& vectors,
                              std::vector<double>& values, const Progress& progress) override {
        if (n < 1 || n > kMaxEigenCoils || upper.size() != std::size_t(n) * std::size_t(n + 1) / 2 * voxels)
            return Backend::dominantEigenvectors(n, voxels, upper, vectors, values, progress);
        withCpuFallback("coil maps' eigenvectors", [&] {
            DeviceGuard dg(device_);
            progress.update(0);
            DeviceBuffer<double2> du(std::max<std::size_t>(upper.size(), 1), "coil covariances"),
                dv(std::max<std::size_t>(std::size_t(n) * voxels, 1), "coil eigenvectors");
            DeviceBuffer<double> dl(std::max<std::size_t>(voxels, 1), "coil eigenvalues");
            static_assert(sizeof(double2) == sizeof(cdouble));
            du.upload(reinterpret_cast<const double2*>(upper.data()), upper.size(), s());
            cuda::dominantEigenvectors(n, voxels, du.data(), dv.data(), dl.data(), s());
            resizeForOverwrite(vectors, std::size_t(n) * voxels);
            values.resize(voxels);
            dv.download(reinterpret_cast<double2*>(vectors.data()), vectors.size(), s());
            dl.download(values.data(), voxels, s());
            progress.update(1);
        }, [&](Backend& cpu) { cpu.dominantEigenvectors(n, voxels, upper, vectors, values, progress); });
    }

    // The branchless DD projector on this device, ordered on the backend's stream.
    LinearOperatorPtr ctProjector(const ct::CtGeometry& geometry, const ct::ProjectorOptions& options) override {
        DeviceGuard g(device_);
        return cudaDdProjector(*this, geometry, options, s());
    }
    LinearOperatorPtr fourierSums(const Trajectory& t, const SampleGrid& g, const FourierMethod& m) override {
        return std::make_shared<CudaFourierSums<T>>(*this, t, g, parseMethod(m.name), m.tolerance, stream_, device_);
    }

    void forwardSum(const Trajectory& t, const ComplexArray& f, const SampleGrid& g, ComplexArray& out,
                    const FourierMethod& m, const Progress& progress) override {
        if (f.size() != g.points())
            throw InputError("forward sum: " + std::to_string(f.size()) + " values for a grid of " + std::to_string(g.points()));
        withCpuFallback("forward sum", [&] {
            DeviceGuard dg(device_);
            const MethodSpec spec = parseMethod(m.name);
            auto df = uploadArray<T>(f, s(), "forward-sum input");
            DeviceBuffer<C> dout(std::max<std::size_t>(t.samples(), 1), "forward-sum output");
            if (spec.kind == MethodKind::Nufft) {
                GpuNufft<T>& plan = nufftPlan(t, g, SpreadKernel::forTolerance(m.tolerance), true);
                plan.forward(df.data(), dout.data());
                progress.update(1.0);
            } else {
                DirectSum<T>(t, g, s()).forward(spec.version, df.data(), dout.data(), progress);
            }
            downloadArray(dout, t.samples(), out, s());
        }, [&](Backend& cpu) { cpu.forwardSum(t, f, g, out, cpuMethod(m), progress); });
    }

    std::shared_ptr<ToeplitzOperator> makeToeplitz(const Grid& grid, const Trajectory& t, const std::vector<double>& phi2,
                                                   const FourierMethod& m, const Progress& progress) override {
        checkSizes(t, phi2.size(), "Toeplitz weights");
        DeviceGuard dg(device_);
        const SampleGrid differences = SampleGrid::differences(grid);
        DeviceBuffer<C> q = parseMethod(m.name).kind == MethodKind::Multi
                                ? adjointDevice(t, ComplexArray(phi2.begin(), phi2.end()), differences, m, progress)
                                : adjointDevice(t, uploadArray<T>(phi2, s(), "Toeplitz weights"), differences, m,
                                                kToeplitzNufftSigma, progress);
        return std::make_shared<CudaToeplitz<T>>(*this, grid, std::move(q), stream_, ToeplitzFfts::Fused,
                                                 toeplitzPlans(grid, ToeplitzFfts::Fused));
    }
    std::shared_ptr<ToeplitzOperator> toeplitzFromQ(const Grid& grid, const ComplexArray& q) override {
        DeviceGuard dg(device_);
        if (q.size() != grid.doubled().voxels()) throw InputError("Q has " + std::to_string(q.size()) + " values, not " + grid.doubled().describe());
        return std::make_shared<CudaToeplitz<T>>(*this, grid, uploadArray<T>(q, s(), "Q"), stream_, ToeplitzFfts::Fused,
                                                 toeplitzPlans(grid, ToeplitzFfts::Fused));
    }

    // Another CUDA kernel of this precision: its spectrum copied device to device (peer access where
    // the GPUs have it), no Q through the host and no FFT; any other kernel through Q (the default).
    std::shared_ptr<ToeplitzOperator> toeplitzCopy(const ToeplitzOperator& kernel) override {
        const auto* k = dynamic_cast<const CudaToeplitz<T>*>(&kernel);
        auto* from = k ? dynamic_cast<CudaBackend<T>*>(&k->space()) : nullptr;
        if (!from) return Backend::toeplitzCopy(kernel);
        DeviceGuard dg(device_);
        DeviceBuffer<C> spectrum(k->spectrum().size(), "Toeplitz spectrum copy");
        peerCopy(from->device_, k->spectrum().data(), device_, spectrum.data(), spectrum.size(), "Toeplitz spectrum copy");
        check(cudaStreamSynchronize(s()), "Toeplitz spectrum copy");
        return std::make_shared<CudaToeplitz<T>>(*this, *k, std::move(spectrum), stream_, toeplitzPlans(k->grid(), k->ffts()));
    }

    void grid(const Trajectory& t, const ComplexArray& weighted, const Grid& g, const GriddingOptions& o,
              ComplexArray& image, const Progress& progress) override {
        checkSizes(t, weighted.size(), "gridding");
        withCpuFallback("gridding", [&] {
            DeviceGuard dg(device_);
            GpuNufft<T>& plan = nufftPlan(t, SampleGrid::image(g), griddingKernel(o), o.deapodize);
            auto dc = uploadArray<T>(weighted, s(), "gridding input");
            DeviceBuffer<C> dout(g.voxels(), "gridded image");
            plan.adjoint(dc.data(), dout.data());
            downloadArray(dout, g.voxels(), image, s());
            progress.update(1.0);
        }, [&](Backend& cpu) { cpu.grid(t, weighted, g, o, image, progress); });
    }

    std::vector<double> densityCompensation(const Trajectory& t, const Grid& g, const GriddingOptions& o, int iterations,
                                            const Progress& progress) override {
        std::vector<double> result;
        withCpuFallback("density compensation", [&] {
            DeviceGuard dg(device_);
            // Float64 like the CPU's: the fixed point divides by sums of many weights.
            const SpreadKernel kernel = griddingKernel(o);
            // Spread and interpolate only: no cuFFT plan (the first float64 one in a process cost about 0.2 s at 128^3).
            GpuNufft<double> plan(t, SampleGrid::image(g), kernel, false, s(), NufftSteps::SpreadInterpolate);
            const std::size_t M = t.samples();
            std::vector<cdouble> w(M, 1.0), cw(M);
            DeviceBuffer<cdouble> dw(std::max<std::size_t>(M, 1), "density weights"), dcw(std::max<std::size_t>(M, 1), "density weights");
            for (int it = 0; it < iterations; ++it) {
                dw.upload(w.data(), M, s());
                plan.spread(dw.data(), plan.workspace());
                plan.interpolate(plan.workspace(), dcw.data());
                dcw.download(cw.data(), M, s());
                for (std::size_t m = 0; m < M; ++m) w[m] = cw[m].real() > 0 ? w[m] / cw[m].real() : 0.0;
                progress.update(double(it + 1) / iterations);
            }
            // The same normalisation as the CPU backend: k-space area per sample.
            const double ipsi = kernel.integral();
            const double area = std::pow(ipsi * ipsi / kernel.sigma, g.dims);
            result.resize(M);
            for (std::size_t m = 0; m < M; ++m) result[m] = w[m].real() * area;
        }, [&](Backend& cpu) { result = cpu.densityCompensation(t, g, o, iterations, progress); });
        return result;
    }

private:
    cudaStream_t s() const { return stream_->get(); }

    void peerCopy(int from_device, const C* from, int to_device, C* to, std::size_t n, const char* what) {
        DeviceGuard g(device_);
        enablePeerAccess(device_, device_ == from_device ? to_device : from_device);
        check(cudaMemcpyPeerAsync(to, to_device, from, from_device, n * sizeof(C), s()), what);
    }
    // Lets `device` reach `peer`'s memory directly (NVLink or PCIe) where the two can; without
    // it cudaMemcpyPeerAsync still works, staged by the driver. Once per pair and process.
    static void enablePeerAccess(int device, int peer) {
        if (device == peer) return;
        static std::mutex mutex;
        static std::vector<std::pair<int, int>> done;
        std::lock_guard<std::mutex> lock(mutex);
        if (std::find(done.begin(), done.end(), std::make_pair(device, peer)) != done.end()) return;
        done.emplace_back(device, peer);
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess || !can) {
            cudaGetLastError();
            return;
        }
        DeviceGuard g(device);
        if (cudaDeviceEnablePeerAccess(peer, 0) != cudaSuccess) cudaGetLastError();  // already enabled: fine
    }

    static FourierMethod cpuMethod(const FourierMethod& m) {
        FourierMethod r = m;
        if (m.name != "nufft") r.name = "direct";
        return r;
    }

    // The adjoint sum into a device array of g.points().
    DeviceBuffer<C> adjointDevice(const Trajectory& t, const ComplexArray& c, const SampleGrid& g, const FourierMethod& m,
                                  const Progress& progress) {
        DeviceGuard dg(device_);
        const MethodSpec spec = parseMethod(m.name);
        if (spec.kind == MethodKind::Multi) {
            DeviceBuffer<C> out(g.points(), "adjoint-sum output");
            std::vector<C> host;
            multiGpuAdjoint<T>(t, toWorking<T>(c), g, host, m.devices, progress, spec.version);
            out.upload(host.data(), host.size(), s());
            check(cudaStreamSynchronize(s()), "GPU.Multi result");
            return out;
        }
        return adjointDevice(t, uploadArray<T>(c, s(), "adjoint-sum input"), g, m, 2.0, progress);
    }
    // The same from samples already on the device, on this device alone (GPU.Multi splits host
    // arrays: the overload above); the NUFFT with its grid oversampled `sigma` times.
    DeviceBuffer<C> adjointDevice(const Trajectory& t, const DeviceBuffer<C>& dc, const SampleGrid& g, const FourierMethod& m,
                                  double sigma, const Progress& progress) {
        DeviceGuard dg(device_);
        MethodSpec spec = parseMethod(m.name);
        if (spec.kind == MethodKind::Multi) spec.kind = MethodKind::Direct;
        DeviceBuffer<C> out(g.points(), "adjoint-sum output", s());
        if (spec.kind == MethodKind::Nufft) {
            GpuNufft<T>& plan = nufftPlan(t, g, SpreadKernel::forTolerance(m.tolerance, sigma), true);
            plan.adjoint(dc.data(), out.data());
            check(cudaStreamSynchronize(s()), "NUFFT adjoint");
            progress.update(1.0);
        } else {
            TuneParams tp;
            if (spec.version == DirectVersion::Tune) tp = tunedParams<T>(device_).best;
            DirectSum<T>(t, g, s()).adjoint(spec.version, dc.data(), out.data(), tp, 0, g.points(), progress);
        }
        return out;
    }

    // The N grid's cuFFT plan on this backend's stream, made once per shape.
    std::shared_ptr<const GpuFft<T>> gridFft(const Grid& grid) {
        const std::array<int, 4> key{grid.n[0], grid.n[1], grid.n[2], grid.dims};
        std::lock_guard<std::mutex> lock(grid_fft_mutex_);
        auto& plan = grid_ffts_[key];
        if (!plan) plan = std::make_shared<const GpuFft<T>>(grid.n, grid.dims, s());
        return plan;
    }
    // The last 2N grid's Toeplitz plans: one slot, so one grid's work areas at most are held here.
    std::shared_ptr<const ToeplitzPlans<T>> toeplitzPlans(const Grid& grid, ToeplitzFfts ffts) {
        const std::array<int, 5> key{grid.n[0], grid.n[1], grid.n[2], grid.dims, int(ffts)};
        std::lock_guard<std::mutex> lock(grid_fft_mutex_);
        if (!toeplitz_plans_ || toeplitz_plans_key_ != key) {
            toeplitz_plans_.reset();  // its work areas freed (unless a kernel still holds them) before the new plans'
            toeplitz_plans_ = std::make_shared<const ToeplitzPlans<T>>(grid, ffts, s());
            toeplitz_plans_key_ = key;
        }
        return toeplitz_plans_;
    }
    DeviceReductions& reductions() {
        if (!reductions_) reductions_ = std::make_unique<DeviceReductions>();
        return *reductions_;
    }

    // Two cached plans (the image grid's and Q's 2N grid): gridding, density
    // compensation and repeated sums on one trajectory reuse the sort and the cuFFT plan.
    struct CachedPlan {
        std::unique_ptr<GpuNufft<T>> plan;
        std::uint64_t fingerprint = 0;
        SampleGrid grid;
        SpreadKernel kernel;
        bool deapodize = false;
        std::uint64_t used = 0;
        bool matches(std::uint64_t fp, const SampleGrid& g, const SpreadKernel& k, bool d) const {
            return plan && fingerprint == fp && grid.dims == g.dims && grid.size == g.size && grid.spacing == g.spacing &&
                   kernel.kind == k.kind && kernel.width == k.width && kernel.beta == k.beta && kernel.sigma == k.sigma &&
                   deapodize == d;
        }
    };
    GpuNufft<T>& nufftPlan(const Trajectory& t, const SampleGrid& g, const SpreadKernel& k, bool deapodize) {
        const std::uint64_t fp = trajectoryFingerprint(t);
        for (auto& c : plans_)
            if (c.matches(fp, g, k, deapodize)) {
                c.used = ++clock_;
                return *c.plan;
            }
        CachedPlan& slot = plans_[0].used <= plans_[1].used ? plans_[0] : plans_[1];
        slot.plan.reset();  // free its grids before the new plan allocates
        slot.plan = std::make_unique<GpuNufft<T>>(t, g, k, deapodize, s());
        slot.fingerprint = fp;
        slot.grid = g;
        slot.kernel = k;
        slot.deapodize = deapodize;
        slot.used = ++clock_;
        return *slot.plan;
    }

    // Runs `gpu`; when the device runs out of memory, says so once and runs `cpu` on the CPU backend.
    template <class Gpu, class Cpu>
    void withCpuFallback(const char* what, Gpu&& gpu, Cpu&& cpu) {
        try {
            gpu();
        } catch (const OutOfMemory& e) {
            for (auto& c : plans_) c.plan.reset();
            {
                std::lock_guard<std::mutex> lock(grid_fft_mutex_);
                toeplitz_plans_.reset();
            }
            std::fprintf(stderr, "reconstudio: %s on %s: %s; falling back to the CPU backend\n", what,
                         props_.name.c_str(), e.what());
            if (!cpu_) cpu_ = createCpuBackend(std::is_same_v<T, float> ? Precision::Single : Precision::Double);
            cpu(*cpu_);
        }
    }

    int device_;
    DeviceProps props_;
    std::shared_ptr<Stream> stream_;
    CachedPlan plans_[2];
    std::uint64_t clock_ = 0;
    std::unique_ptr<DeviceReductions> reductions_;
    DeviceBuffer<double> haar_partial_;  // haarNorm1's per-tile sums
    std::mutex grid_fft_mutex_;
    std::map<std::array<int, 4>, std::shared_ptr<const GpuFft<T>>> grid_ffts_;
    std::shared_ptr<const ToeplitzPlans<T>> toeplitz_plans_;
    std::array<int, 5> toeplitz_plans_key_{};
    std::unique_ptr<Backend> cpu_;
};

}  // namespace

template struct ToeplitzPlans<float>;
template struct ToeplitzPlans<double>;
template class CudaToeplitz<float>;
template class CudaToeplitz<double>;
template std::complex<float>* devicePointer<float>(const Vector&);
template std::complex<double>* devicePointer<double>(const Vector&);

}  // namespace cuda

bool cudaCompiledIn() { return true; }

int cudaDeviceCount() {
    try {
        return cuda::deviceCount();
    } catch (const std::exception&) {
        return 0;
    }
}

std::unique_ptr<Backend> createCudaBackend(Precision p, int device, std::string* why) {
    try {
        const int n = cuda::deviceCount();
        if (n == 0) {
            if (why) *why = "no CUDA device (or no driver) found";
            return nullptr;
        }
        if (device < 0 || device >= n) {
            if (why) *why = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(n) + " found)";
            return nullptr;
        }
        const cuda::DeviceProps props = cuda::deviceProps(device);
        if (props.cc_major < 6) {
            if (why) *why = props.describe() + " is older than compute capability 6.0, which the backend needs";
            return nullptr;
        }
        if (p == Precision::Single) return std::make_unique<cuda::CudaBackend<float>>(device);
        return std::make_unique<cuda::CudaBackend<double>>(device);
    } catch (const std::exception& e) {
        if (why) *why = std::string("CUDA initialisation failed: ") + e.what();
        return nullptr;
    }
}

}  // namespace recon
