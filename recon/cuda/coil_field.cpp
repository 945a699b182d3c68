#include "recon/cuda/coil_field.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "recon/core/host_memory.hpp"
#include "recon/cuda/coil_eigen.hpp"
#include "recon/cuda/cuda_util.hpp"

namespace recon::cuda {
namespace {

static_assert(sizeof(double2) == sizeof(cdouble));
const double2* asDevice(const cdouble* p) { return reinterpret_cast<const double2*>(p); }

// The blocks' images on `grid`, image after image, in `out` (count x voxels): the separable DFT
// axis by axis through `scratch`, as recon::blockImages on the host.
DeviceBuffer<double2> blockImages(const FrequencyBlocks& blocks, const Grid& grid, cudaStream_t stream) {
    const std::size_t count = blocks.count();
    DeviceBuffer<double2> current(std::max<std::size_t>(blocks.values.size(), 1), "coil field blocks");
    current.upload(asDevice(blocks.values.data()), blocks.values.size(), stream);
    BlockShape shape = blocks.shape;
    for (int a = 0; a < grid.dims; ++a) {
        const int len = shape[std::size_t(a)], out_len = grid.n[std::size_t(a)];
        const ComplexArray m = dftMatrix(out_len, blocks.first[std::size_t(a)], len, blocks.sign, true);
        DeviceBuffer<double2> dm(m.size(), "coil field DFT matrix");
        dm.upload(asDevice(m.data()), m.size(), stream);
        std::size_t below = 1, above = count;
        for (int b = 0; b < a; ++b) below *= std::size_t(shape[std::size_t(b)]);
        for (int b = a + 1; b < 3; ++b) above *= std::size_t(shape[std::size_t(b)]);
        DeviceBuffer<double2> next(std::max<std::size_t>(above * std::size_t(out_len) * below, 1), "coil field images");
        transformAxis(current.data(), next.data(), dm.data(), len, out_len, below, above, stream);
        // The matrix and the previous stage are freed when the stream has used them (cudaFree waits).
        check(cudaStreamSynchronize(stream), "coil field images");
        current = std::move(next);
        shape[std::size_t(a)] = out_len;
    }
    return current;
}

}  // namespace

CoilFieldEigen coilFieldEigenvectors(const Grid& grid, const CoilField& field, cudaStream_t stream, const Progress& progress) {
    checkCoilField(field, grid);
    const int n = field.coils;
    const std::size_t voxels = grid.voxels(), pairs = std::size_t(n) * std::size_t(n + 1) / 2;
    CoilFieldEigen out;
    // The coils' images and the object (found by the host's code from the root sum of squares).
    DeviceBuffer<double2> images = blockImages(field.coil_blocks, grid, stream);
    {
        DeviceBuffer<double> rss(voxels, "root sum of squares");
        rootSumOfSquares(images.data(), n, voxels, rss.data(), stream);
        std::vector<double> host(voxels);
        rss.download(host.data(), voxels, stream);
        out.object = objectFromRootSumOfSquares(host, field.object_threshold);
    }
    progress.update(0.1);
    DeviceBuffer<double2> upper;
    if (!field.pair_blocks.values.empty()) {
        images = DeviceBuffer<double2>();  // room for the field
        upper = blockImages(field.pair_blocks, grid, stream);
    } else {
        upper = DeviceBuffer<double2>(pairs * voxels, "coil covariances");
        outerProducts(images.data(), n, voxels, upper.data(), stream);
        images = DeviceBuffer<double2>();
        DeviceBuffer<double2> scratch(pairs * voxels, "coil covariances (box sums)");
        std::size_t stride = 1;
        for (int axis = 0; axis < grid.dims; ++axis) {
            boxSum(upper.data(), scratch.data(), pairs, voxels, grid.n[std::size_t(axis)], stride, field.half_width, stream);
            std::swap(upper, scratch);
            stride *= std::size_t(grid.n[std::size_t(axis)]);
        }
    }
    check(cudaStreamSynchronize(stream), "coil field");
    progress.update(0.2);
    // The object's voxels only, one thread each; zero elsewhere.
    if (voxels > std::size_t(UINT32_MAX)) throw InputError("coil maps: more than 2^32 voxels");
    std::vector<std::uint32_t> index;
    for (std::size_t v = 0; v < voxels; ++v)
        if (out.object[v]) index.push_back(std::uint32_t(v));
    const std::size_t count = index.size();
    DeviceBuffer<std::uint32_t> dindex(std::max<std::size_t>(count, 1), "object voxels");
    dindex.upload(index.data(), count, stream);
    DeviceBuffer<double2> vectors(std::size_t(n) * voxels, "coil eigenvectors");
    DeviceBuffer<double> values(voxels, "coil eigenvalues");
    vectors.fill0(stream);
    values.fill0(stream);
    if (count) dominantEigenvectors(n, voxels, upper.data(), vectors.data(), values.data(), stream, dindex.data(), count);
    check(cudaStreamSynchronize(stream), "coil eigenvectors");
    progress.update(0.9);
    resizeForOverwrite(out.vectors, std::size_t(n) * voxels);
    out.values.resize(voxels);
    vectors.download(reinterpret_cast<double2*>(out.vectors.data()), out.vectors.size(), stream);
    values.download(out.values.data(), voxels, stream);
    progress.update(1);
    return out;
}

}  // namespace recon::cuda
