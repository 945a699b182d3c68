// The CUDA backend's pieces that the benchmark and the GPU tests reach below
// the Backend interface: method names, the device-resident Toeplitz operator,
// and the multi-GPU split of a direct sum.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/cuda/cuda_util.hpp"
#include "recon/cuda/direct_sums.hpp"
#include "recon/cuda/fft_plan.hpp"

namespace recon::cuda {

enum class MethodKind { Direct, Multi, Nufft };
struct MethodSpec {
    MethodKind kind = MethodKind::Nufft;
    DirectVersion version = DirectVersion::ExactFast;
};
// "direct" is our best exact method (exact-fast); throws InputError naming the methods.
MethodSpec parseMethod(const std::string& name);
std::vector<MethodInfo> cudaMethods();

// How the Toeplitz operator's FFTs run: full 3D cuFFT transforms; cuFFT pruned of
// the padding's zeros; pruned, with the slowest axis's transforms and the spectrum
// product fused into one kernel of ours (PaddedFft; falls back to Pruned where the
// 2N grid's slowest axis is not a power of two). Fused is the default; the others
// remain for the benchmark's comparison and the tests.
enum class ToeplitzFfts { Full, Pruned, Fused };

// The Toeplitz embedding's cuFFT plans for one 2N grid on one stream: the whole transforms (the
// spectrum, q()) and the products' pruned or fused ones (null: the whole ones serve). The backend
// keeps the last grid's, so a kernel made again for that grid (a new data set, the benchmark's
// repeats) plans nothing: planning took 0.8 ms of a 128^3 Q on an H100.
template <class T>
struct ToeplitzPlans {
    ToeplitzPlans(const Grid& grid, ToeplitzFfts ffts, cudaStream_t stream);
    std::shared_ptr<const GpuFft<T>> full;
    std::shared_ptr<const PaddedFft<T>> padded;
};

// A fingerprint of a whole trajectory (every coordinate's bits), the key that reuses a NUFFT plan
// exactly while the trajectory is unchanged: eight independent multiply-xor lanes per block of
// coordinates, the blocks on all cores, combined in order (one serial FNV-1a chain took 1.3 ms
// for the paper's 853,776 coordinates, twice per reconstruction).
std::uint64_t trajectoryFingerprint(const Trajectory& t);

// A Vector's storage on the CUDA backend: a device array in the working precision. With a stream:
// allocated and freed in that stream's order (the backend's; it is kept alive until the free).
template <class T>
struct DeviceStorage final : VectorStorage {
    DeviceStorage(std::size_t n, const char* what) : v(n, what) {}
    DeviceStorage(std::size_t n, const char* what, std::shared_ptr<Stream> s) : stream(std::move(s)), v(n, what, stream->get()) {}
    explicit DeviceStorage(DeviceBuffer<std::complex<T>>&& b, std::shared_ptr<Stream> s = nullptr) : stream(std::move(s)), v(std::move(b)) {}
    std::size_t size() const override { return v.size(); }
    std::shared_ptr<Stream> stream;  // declared before v: destroyed after it
    DeviceBuffer<std::complex<T>> v;
};
// The device array behind a Vector of this backend (InputError for another backend's vector).
template <class T>
std::complex<T>* devicePointer(const Vector& x);

// F^H F through the Toeplitz embedding: FFT(Kcirc) / (2N)^d resident on the device.
template <class T>
class CudaToeplitz final : public ToeplitzOperator {
public:
    using C = std::complex<T>;
    // Takes Q (on grid.doubled(), device memory) and turns it into the spectrum in place.
    // `plans`: made for this grid, `ffts` and stream (null: made here).
    CudaToeplitz(VectorSpace& space, const Grid& grid, DeviceBuffer<C>&& q, std::shared_ptr<Stream> stream,
                 ToeplitzFfts ffts = ToeplitzFfts::Fused, std::shared_ptr<const ToeplitzPlans<T>> plans = nullptr);
    // A copy of `source` on `space`'s device: `spectrum` already holds source.spectrum() (copied there
    // device to device); its FFT path is source's, and no FFT runs here.
    CudaToeplitz(VectorSpace& space, const CudaToeplitz& source, DeviceBuffer<C>&& spectrum, std::shared_ptr<Stream> stream,
                 std::shared_ptr<const ToeplitzPlans<T>> plans = nullptr);
    ComplexArray q() const override;
    // Q on the device (one inverse FFT of the spectrum), never through the host.
    Vector qVector() const override;
    // y = F^H F x on device arrays of grid().voxels(), on the backend's stream.
    void applyDevice(const C* x, C* y) const;
    cudaStream_t stream() const { return stream_->get(); }
    ToeplitzFfts ffts() const { return padded_ ? (padded_->fused() ? ToeplitzFfts::Fused : ToeplitzFfts::Pruned) : ToeplitzFfts::Full; }
    const std::shared_ptr<Stream>& sharedStream() const { return stream_; }
    // FFT(Kcirc) / L on the 2N grid, on this kernel's device.
    const DeviceBuffer<C>& spectrum() const { return spectrum_; }
    // How many coils coilSumNormal batches at once (at most kMaxCoilBatch); 0 (the default):
    // as many as half the device's free memory holds at the first product (each coil needs half
    // a 2N grid and as much again for cuFFT's work area), chosen once. For tests and benchmarks.
    void setCoilChunk(int coils) { coil_chunk_ = coils; }
    // The chunk the last coilSumNormal used (0: none yet, or the coil-by-coil path).
    int coilChunk() const { return used_chunk_; }
    // Whether the products prune every axis by the line kernels where the grid allows
    // (PaddedFft::coilSumConvolve; the default), or transform the faster axes by cuFFT between a pad
    // and a crop as before. For tests and benchmarks.
    void setEveryAxisPruned(bool on) { every_axis_ = on; }
    bool everyAxisPruned() const { return every_axis_ && padded_ && padded_->prunesEveryAxis(); }

private:
    void usePlans(ToeplitzFfts ffts, std::shared_ptr<const ToeplitzPlans<T>> plans);
    void applyForward(const Vector& x, Vector& y) const override;
    // The coils in chunks: pad with the maps' products, one batched convolution, crop and sum
    // with the conjugate maps. Coil by coil (the default) where the fused transform is not used.
    void applyCoilSumNormal(const std::vector<const Vector*>& maps, const Vector& x, Vector& y) const override;
    std::array<int, 3> n_{1, 1, 1}, big_{1, 1, 1};
    std::shared_ptr<Stream> stream_;
    DeviceBuffer<C> spectrum_;
    mutable DeviceBuffer<C> work_;  // the 2N grid; apply() is not reentrant (one solve at a time)
    std::shared_ptr<const GpuFft<T>> fft_;
    std::shared_ptr<const PaddedFft<T>> padded_;
    int coil_chunk_ = 0;
    bool every_axis_ = true;
    mutable int auto_chunk_ = 0;     // chosen from the free memory at the first product
    mutable int used_chunk_ = 0;
    mutable bool batch_failed_ = false;  // out of memory once: coil by coil
    mutable DeviceBuffer<C> coil_work_;  // the chunk's half grids, one after another
};

// GPU.Multi: the voxels split over `devices` (all visible GPUs when empty), each
// running `version` (the paper's: its tuned GPU.Tune kernel) on its share; host arrays in and out.
template <class T>
void multiGpuAdjoint(const Trajectory& t, const std::vector<std::complex<T>>& c, const SampleGrid& grid,
                     std::vector<std::complex<T>>& out, std::vector<int> devices = {}, const Progress& progress = {},
                     DirectVersion version = DirectVersion::Tune);

}  // namespace recon::cuda
