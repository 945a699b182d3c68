// Exact Fourier sums on the GPU: the reference paper's seven versions of F^H d
// (Stone et al. 2008, section 5 and Fig. 5; Kirk & Hwu ch. 14) and our own
// faster exact method, a recurrence along x. All evaluate
//   adjoint  out_j = sum_m c_m exp(+i 2 pi k_m . x_j)
//   forward  out_m = sum_j f_j exp(-i 2 pi k_m . x_j)
// on a SampleGrid (x_j = (j - size/2) * spacing per axis). Device-resident:
// inputs and outputs are device pointers; the backend moves host arrays.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/core/types.hpp"
#include "recon/cuda/cuda_util.hpp"

namespace recon::cuda {

enum class DirectVersion {
    Base,       // voxel and scan data in global memory, output read and written every iteration, library sin/cos
    RegAlloc,   // voxel coordinates and the output accumulator in registers
    Coalesce,   // + scan data as separate arrays, each warp reading consecutive addresses
    ConstMem,   // + scan data tiles in constant memory (broadcast through the constant cache)
    FastTrig,   // + hardware sin/cos on the special-function units
    Tune,       // + tuned threads per block, tile (scan points per launch) and unroll factor
    ExactFast,  // ours: one sin/cos per run of 16-32 voxels along x, then an exact recurrence (2 FMAs per voxel)
};
std::string toString(DirectVersion v);
// True for versions that use the hardware (SFU) sin/cos; the paper counts one FLOP per sin or cos for
// them and ~13/12 for the library's software sin/cos.
bool usesHardwareTrig(DirectVersion v);
// The paper's FLOP count per (sample, voxel) pair: 38 with software trig, 15 with hardware trig.
double paperFlopsPerPair(DirectVersion v);

// The paper's code transformations searched by GPU.Tune, plus where the scan
// tile lives: constant memory (the paper's choice, one launch per tile) or
// shared memory (one launch; each block stages tiles itself). On Hopper the
// constant cache holds only a few hundred scan points for all warps of an SM,
// so the search is allowed both (Kirk & Hwu 14.3 note the read-only/shared
// alternatives on newer devices).
struct TuneParams {
    int threads = 256;    // threads per block (32..512 by 32)
    int tile = 256;       // scan points per tile (32..2048 by powers of 2)
    int unroll = 1;       // inner-loop unroll factor (1..8)
    bool shared = false;  // scan tile in shared memory instead of constant memory
    int voxels = 1;       // voxels per thread (shared placement: 1 or 2; a scan point read serves both)
    std::string describe() const;
};
// Largest tile constant memory holds for one precision (5 values per scan point).
int maxConstantTile(bool double_precision);
// Largest shared-memory tile (8 values per scan point, within the default 48 KiB).
int maxSharedTile(bool double_precision);

template <class T>
class DirectSum {
public:
    using C = std::complex<T>;
    // Uploads the sample positions; `grid` is the image grid or Q's 2N grid.
    DirectSum(const Trajectory& t, const SampleGrid& grid, cudaStream_t stream = nullptr);

    std::size_t samples() const { return M_; }
    std::size_t points() const { return grid_.points(); }
    const SampleGrid& grid() const { return grid_; }

    // out[j - begin] for grid points j in [begin, end) (all of them by default), c on the device.
    // Splits the voxels into smaller chunks when a chunk's scratch memory does not fit.
    void adjoint(DirectVersion v, const C* c, C* out, const TuneParams& tp = {}, std::size_t begin = 0,
                 std::size_t end = std::size_t(-1), const Progress& progress = {});
    // Voxels per recurrence run of the exact-fast adjoint: 16 or 32 (the default is 32
    // in float32, 16 in float64). Longer runs share one sin/cos among more voxels;
    // the recurrence's rounding grows as the run length squared.
    void setRunLength(int voxels);
    int runLength() const { return run_; }

    // out[m] for all samples, f on the device (all grid points).
    void forward(DirectVersion v, const C* f, C* out, const Progress& progress = {});

private:
    void adjointChunk(DirectVersion v, const C* c, C* out, const TuneParams& tp, std::size_t begin,
                      std::size_t end, const Progress& progress, double done, double share);
    void packSamples(const C* c, int layout);

    SampleGrid grid_;
    std::size_t M_ = 0;
    cudaStream_t stream_ = nullptr;
    DeviceBuffer<T> k_;          // 3 per sample: kx, ky, kz (cycles per FOV)
    DeviceBuffer<T> rot_;        // 3 per sample: cos D, sin D, 2 cos D for the step D = 2 pi kx dx along x (exact-fast)
    DeviceBuffer<T> packed_;     // per-call scan data in the layout the version reads
    std::size_t chunk_ = 0;      // voxels per launch chunk; shrinks on out-of-memory
    int run_ = 16;
};

}  // namespace recon::cuda
