#include "frames_files.hpp"

#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <random>
#include <sstream>

#include "recon/backend/backend.hpp"
#include "recon/core/conventions.hpp"
#include "recon/phantom/shepp_logan.hpp"
#include "recon/trajectory/trajectories.hpp"

namespace recon::test {
namespace {

// d = phi(k) * sum_n rho_n exp(-i 2 pi k.x_n): the model, evaluated exactly (box basis).
ComplexArray exactData(const Trajectory& t, const Grid& g, const ComplexArray& image) {
    auto cpu = createCpuBackend(Precision::Double);
    ComplexArray d;
    cpu->forwardSum(t, image, SampleGrid::image(g), d, {"direct", 0});
    for (std::size_t m = 0; m < d.size(); ++m) d[m] *= basisTransform(BasisFunction::BoxVoxel, g, t.kx(m), t.ky(m), t.kz(m));
    return d;
}

std::string headerXml(int nz, double fov_z, bool stack) {
    ISMRMRD::IsmrmrdHeader h;
    h.experimentalConditions.H1resonanceFrequency_Hz = 63500000;
    ISMRMRD::Encoding e;
    e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(kFramesN, kFramesN, std::uint16_t(nz));
    e.encodedSpace.fieldOfView_mm = {220, 220, float(fov_z)};
    e.reconSpace = e.encodedSpace;
    e.encodingLimits.kspace_encoding_step_1 = ISMRMRD::Limit(0, kFramesSpokes - 1, 0);
    if (stack) e.encodingLimits.kspace_encoding_step_2 = ISMRMRD::Limit(0, std::uint16_t(nz - 1), std::uint16_t(nz / 2));
    e.trajectory = ISMRMRD::TrajectoryType::RADIAL;
    h.encoding.push_back(e);
    std::ostringstream xml;
    ISMRMRD::serialize(h, xml);
    return xml.str();
}

void appendNoise(ISMRMRD::Dataset& file) {
    std::mt19937 rng(5);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    for (int s = 0; s < 8; ++s) {
        ISMRMRD::Acquisition noise(kFramesReadout, kFramesCoils, 0);
        noise.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
        for (int i = 0; i < kFramesReadout; ++i)
            for (int c = 0; c < kFramesCoils; ++c)
                noise.data(std::uint16_t(i), std::uint16_t(c)) = {gauss(rng), gauss(rng)};
        file.appendAcquisition(noise);
    }
}

// One spoke of `data` (samples of every spoke, this frame's) as an acquisition.
ISMRMRD::Acquisition spoke(const Trajectory& t, const ComplexArray& data, int s, bool store_trajectory) {
    ISMRMRD::Acquisition acq(kFramesReadout, kFramesCoils, store_trajectory ? 2 : 0);
    acq.idx().kspace_encode_step_1 = std::uint16_t(s);
    for (int i = 0; i < kFramesReadout; ++i) {
        const std::size_t m = std::size_t(s * kFramesReadout + i);
        for (int c = 0; c < kFramesCoils; ++c)
            acq.data(std::uint16_t(i), std::uint16_t(c)) = std::complex<float>(frameCoilWeight(c) * data[m]);
        if (store_trajectory)
            for (int a = 0; a < 2; ++a) acq.traj(std::uint16_t(a), std::uint16_t(i)) = float(t.k[3 * m + std::size_t(a)]);
    }
    return acq;
}
}  // namespace

cdouble frameCoilWeight(int c) { return c == 0 ? cdouble(0.6, 0) : cdouble(0, 0.8); }

FramesTruth writeMultiSliceFile(const std::string& path, bool store_trajectory) {
    FramesTruth w;
    w.grid = Grid::make2D(kFramesN, kFramesN);
    w.grid.fov_mm = {220, 220, 5};
    w.trajectory = goldenAngleRadial2D(kFramesN, kFramesSpokes, kFramesReadout);
    const ComplexArray a = Phantom::sheppLogan2D().image(w.grid);
    ComplexArray b(a.size());
    for (int y = 0; y < kFramesN; ++y)
        for (int x = 0; x < kFramesN; ++x) b[w.grid.index(x, y, 0)] = a[w.grid.index(y, x, 0)];
    ISMRMRD::Dataset file(path.c_str(), "dataset", true);
    file.writeHeader(headerXml(1, 5, false));
    appendNoise(file);
    for (int r = 0; r < 2; ++r)
        for (int sl = 0; sl < 2; ++sl) {
            ComplexArray image = sl == 0 ? a : b;
            for (auto& v : image) v *= double(1 + r);
            const ComplexArray data = exactData(w.trajectory, w.grid, image);
            w.truth.push_back(image);
            for (int s = 0; s < kFramesSpokes; ++s) {
                ISMRMRD::Acquisition acq = spoke(w.trajectory, data, s, store_trajectory);
                acq.idx().slice = std::uint16_t(sl);
                acq.idx().repetition = std::uint16_t(r);
                file.appendAcquisition(acq);
            }
        }
    return w;
}

StackTruth writeStackOfStarsFile(const std::string& path) {
    constexpr int P = 4;
    StackTruth w;
    w.grid = Grid::make3D(kFramesN, kFramesN, P);
    w.grid.fov_mm = {220, 220, 20};
    w.truth = Phantom::sheppLogan3D().image(w.grid);
    const Trajectory t2 = goldenAngleRadial2D(kFramesN, kFramesSpokes, kFramesReadout);
    const std::size_t M = t2.samples();
    std::vector<ComplexArray> data(P);
    for (int p = 0; p < P; ++p) {  // partition p: k_z = p - P/2 cycles per FOV
        Trajectory t3 = t2;
        t3.dims = 3;
        for (std::size_t m = 0; m < M; ++m) t3.k[3 * m + 2] = p - P / 2;
        data[std::size_t(p)] = exactData(t3, w.grid, w.truth);
    }
    ISMRMRD::Dataset file(path.c_str(), "dataset", true);
    file.writeHeader(headerXml(P, 20, true));
    appendNoise(file);
    for (int s = 0; s < kFramesSpokes; ++s)
        for (int p = 0; p < P; ++p) {
            ISMRMRD::Acquisition acq = spoke(t2, data[std::size_t(p)], s, true);
            acq.idx().kspace_encode_step_2 = std::uint16_t(p);
            file.appendAcquisition(acq);
        }
    return w;
}

}  // namespace recon::test
