// Files of several frames (dataset_io.hpp's Frame): multi-slice 2D radial with repetitions and a
// stack of stars, written with ISMRMRD's API (frames_files.hpp), each frame checked against its
// own truth; a file without a stored trajectory named, and completed with --trajectory.
#include <gtest/gtest.h>

#include <cmath>

#include "frames_files.hpp"
#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/core/metrics.hpp"
#include "recon/io/bart_cfl.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/session/reconstruction.hpp"

namespace recon::test {
namespace {

double relativeDifference(const ComplexArray& a, const ComplexArray& b) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        num += std::norm(a[i] - b[i]);
        den += std::norm(b[i]);
    }
    return std::sqrt(num / den);
}

ComplexArray magnitude(ComplexArray a) {
    for (auto& v : a) v = std::abs(v);
    return a;
}

// The sum of squares of the coil-by-coil solves: |image| (the coil weights' sum |w|^2 is 1).
// From exact data the error left is the radial sampling's: the corners of k-space are never
// sampled (about 14 % and 30 dB for every frame here, the same as one 2D file's).
ComplexArray reconstruct(std::shared_ptr<Dataset> d) {
    d->noise.clear();  // the noise scan is random: whitening with it would mix the coils slightly
    ReconstructionSession session(createCpuBackend(Precision::Double));
    session.setDataset(d);
    SolveOptions o;
    o.lambda = 0.001;
    o.iterations = 40;
    return session.solve(o).image;
}

TEST(IsmrmrdFrames, MultiSliceRepetitionsOpenAsFramesSharingTheNoiseScan) {
    ScratchDir dir;
    const FramesTruth w = writeMultiSliceFile(dir.file("slices.h5"));
    InputSpec spec;
    spec.input = dir.file("slices.h5");
    const Frames f = readFrames(spec);
    ASSERT_EQ(f.frames.size(), 4u);
    EXPECT_TRUE(f.complete());
    EXPECT_EQ(f.counts.describe(), "2 slices x 2 repetitions");
    const FrameIndex expected[] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 1}, {1, 0, 0, 1}};
    for (std::size_t i = 0; i < 4; ++i) {
        const Frame& fr = f.frames[i];
        EXPECT_EQ(fr.index, expected[i]) << i;
        EXPECT_EQ(fr.name, "slice " + std::to_string(expected[i].slice) + ", repetition " +
                               std::to_string(expected[i].repetition));
        EXPECT_EQ(fr.data->grid, w.grid);
        EXPECT_EQ(fr.data->coils, kFramesCoils);
        ASSERT_EQ(fr.data->samples(), w.trajectory.samples());
        // The one noise scan, shared by every frame (8 acquisitions of kFramesReadout samples).
        EXPECT_EQ(fr.data->noise.size(), std::size_t(8 * kFramesReadout * kFramesCoils));
        EXPECT_EQ(fr.data->noise, f.frames[0].data->noise);
        EXPECT_NE(fr.data->source.find("frame " + std::to_string(i) + " of 4"), std::string::npos) << fr.data->source;
    }
    // readDataset refuses to guess, naming the frames and --frame; with it, that frame.
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "slices.h5", "4 frames", "2 slices x 2 repetitions", "--frame");
    spec.frame = 3;
    const auto one = readDataset(spec);
    EXPECT_EQ(one->kspace, f.frames[3].data->kspace);
    spec.frame = 4;
    EXPECT_THROW_MESSAGE(readFrames(spec), InputError, "slices.h5", "4 frame(s)", "--frame 4");
}

TEST(IsmrmrdFrames, EachSliceAndRepetitionReconstructsToItsOwnImage) {
    ScratchDir dir;
    const FramesTruth w = writeMultiSliceFile(dir.file("slices.h5"));
    InputSpec spec;
    spec.input = dir.file("slices.h5");
    const Frames f = readFrames(spec);
    ASSERT_EQ(f.frames.size(), w.truth.size());
    std::vector<ComplexArray> images;
    for (const Frame& fr : f.frames) images.push_back(reconstruct(fr.data));
    for (std::size_t i = 0; i < images.size(); ++i) {
        const ComplexArray truth = magnitude(w.truth[i]);
        const Quality own = measureQuality(images[i], truth, false);
        std::printf("frame %zu (%s): PSNR %.2f dB, error %.2f %%\n", i, f.frames[i].name.c_str(), own.psnr_db,
                    own.error_percent);
        EXPECT_GT(own.psnr_db, 29.0) << f.frames[i].name;
        EXPECT_LT(own.error_percent, 16.0) << f.frames[i].name;
        for (std::size_t j = 0; j < images.size(); ++j)  // and is not any other frame's image
            if (j != i) EXPECT_GT(relativeDifference(images[i], magnitude(w.truth[j])), 0.4) << i << " vs " << j;
    }
    // Repetition 1 is twice repetition 0, slice by slice.
    for (int s = 0; s < 2; ++s) {
        ComplexArray half = images[std::size_t(2 + s)];
        for (auto& v : half) v *= 0.5;
        EXPECT_LT(relativeDifference(half, images[std::size_t(s)]), 0.02) << "slice " << s;
    }
}

// The inverse FFT along k_z (with 1/N, k_z = 0 at the header's centre, the box basis's
// sinc(k_z/N) divided out) turns each partition into the 2D problem of its slice: the data
// equal the 2D model's sums of the 3D truth's slice to float32 precision.
TEST(IsmrmrdFrames, StackOfStarsPartitionsAreTheSlicesOfThe3DImage) {
    ScratchDir dir;
    const StackTruth w = writeStackOfStarsFile(dir.file("stack.h5"));
    InputSpec spec;
    spec.input = dir.file("stack.h5");
    const Frames f = readFrames(spec);
    ASSERT_EQ(f.frames.size(), 4u);
    EXPECT_EQ(f.counts.describe(), "4 partitions");
    auto cpu = createCpuBackend(Precision::Double);
    const Grid g2 = Grid::make2D(kFramesN, kFramesN);
    const std::size_t per_slice = g2.voxels();
    ComplexArray stacked;
    for (int n = 0; n < 4; ++n) {
        const Dataset& d = *f.frames[std::size_t(n)].data;
        EXPECT_EQ(f.frames[std::size_t(n)].index.partition, n);
        EXPECT_EQ(d.grid, g2);
        EXPECT_DOUBLE_EQ(d.grid.fov_mm[2], 5.0);  // the slab's 20 mm over 4 partitions
        const ComplexArray slice(w.truth.begin() + long(n * per_slice), w.truth.begin() + long((n + 1) * per_slice));
        ComplexArray model;
        cpu->forwardSum(d.trajectory, slice, SampleGrid::image(g2), model, {"direct", 0});
        for (std::size_t m = 0; m < model.size(); ++m)
            model[m] *= basisTransform(BasisFunction::BoxVoxel, g2, d.trajectory.kx(m), d.trajectory.ky(m), 0);
        for (int c = 0; c < kFramesCoils; ++c) {
            ComplexArray coil(d.coil(c), d.coil(c) + d.samples()), expected = model;
            for (auto& v : expected) v *= frameCoilWeight(c);
            if (n == 0) {  // partition 0 is the edge z = -1/2: the phantom is empty there, and so are the data
                for (std::size_t m = 0; m < coil.size(); ++m) ASSERT_LT(std::abs(coil[m]), 1e-5) << m;
                continue;
            }
            EXPECT_LT(relativeDifference(coil, expected), 2e-6) << "partition " << n << ", coil " << c;
        }
        const ComplexArray image = reconstruct(f.frames[std::size_t(n)].data);
        stacked.insert(stacked.end(), image.begin(), image.end());
    }
    const Quality q = measureQuality(stacked, magnitude(w.truth), false);
    std::printf("stack of stars vs the 3D truth: PSNR %.2f dB, error %.2f %%\n", q.psnr_db, q.error_percent);
    EXPECT_LT(q.error_percent, 13.0);  // measured 10.9 % (the corners of k-space, as above)
}

TEST(IsmrmrdFrames, AFileWithoutTrajectoryNamesItAndTakesOneFromTrajectory) {
    ScratchDir dir;
    const FramesTruth w = writeMultiSliceFile(dir.file("notraj.h5"), false);
    InputSpec spec;
    spec.input = dir.file("notraj.h5");
    EXPECT_THROW_MESSAGE(readFrames(spec), InputError, "notraj.h5", "acquisition 8", "stores no trajectory",
                         "--trajectory");
    // The positions as `bart traj` would write them: (3, readout, spokes), cycles per FOV.
    std::vector<cfloat> k(w.trajectory.k.size());
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = cfloat(float(w.trajectory.k[i]), 0);
    io::writeCfl(dir.file("traj"), {3, kFramesReadout, kFramesSpokes}, k);
    spec.trajectory = dir.file("traj");
    const Frames f = readFrames(spec);
    ASSERT_EQ(f.frames.size(), 4u);
    for (std::size_t i = 0; i < w.trajectory.k.size(); ++i)
        ASSERT_EQ(f.frames[2].data->trajectory.k[i], double(float(w.trajectory.k[i]))) << i;
    EXPECT_NE(f.frames[2].data->source.find("trajectory from"), std::string::npos);
    const Quality q = measureQuality(reconstruct(f.frames[2].data), magnitude(w.truth[2]), false);
    EXPECT_GT(q.psnr_db, 29.0);
    // One frame's readouts: a trajectory of another length is named.
    io::writeCfl(dir.file("short"), {3, kFramesReadout, 2}, std::vector<cfloat>(3 * kFramesReadout * 2));
    spec.trajectory = dir.file("short");
    EXPECT_THROW_MESSAGE(readFrames(spec), InputError, "short", "128 samples", "has 4096");
}

}  // namespace
}  // namespace recon::test
