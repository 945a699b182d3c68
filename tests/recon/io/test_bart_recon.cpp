// Data made with BART's own tools (`bart traj`, `bart phantom -k -t`, `bart
// noise`) open and reconstruct against BART's own truth (`bart phantom`).
// BART's analytic k-space is C/N^d times this program's model (C = 4 sqrt(2) /
// pi^(3/2), docs/FILE_FORMAT.md); the reader keeps values as stored, so the
// test rescales with `bart scale` exactly as tools/bart/compare.sh does.
#include <gtest/gtest.h>

#include <cmath>

#include "io_test_support.hpp"
#include "recon/core/metrics.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/session/reconstruction.hpp"

namespace recon::test {
namespace {

struct Case {
    const char* name;
    int dims, n, spokes;
    double noise_variance;  // of BART's data, before rescaling (0: none)
    double min_psnr_db;     // iterative, against BART's truth
};

class BartData : public ::testing::TestWithParam<Case> {};

TEST_P(BartData, OpensAndReconstructs) {
    RECONSTUDIO_REQUIRE_BART();
    const Case c = GetParam();
    ScratchDir dir;
    const std::string three = c.dims == 3 ? "-3 " : "";
    bart(dir, "traj -r " + three + "-x " + std::to_string(c.n) + " -y " + std::to_string(c.spokes) + " t");
    bart(dir, "phantom " + three + "-k -t t k_bart");
    bart(dir, "phantom " + three + "-x " + std::to_string(c.n) + " truth");
    std::string data = "k_bart";
    if (c.noise_variance > 0) {
        bart(dir, "noise -s 7 -n " + std::to_string(c.noise_variance) + " k_bart k_noisy");
        data = "k_noisy";
    }
    const double C = 4 * std::sqrt(2.0) / std::pow(M_PI, 1.5);
    const double to_model = std::pow(double(c.n), c.dims) / C;
    bart(dir, "scale " + std::to_string(to_model) + " " + data + " k");

    InputSpec spec;
    spec.trajectory = dir.file("t");
    spec.kspace = dir.file("k");
    spec.truth = dir.file("truth");
    spec.basis = BasisFunction::Point;  // BART's phantom k-space is the NDFT of point samples
    auto d = readDataset(spec);
    ASSERT_EQ(d->grid, Grid::cube(c.dims, c.n));
    ASSERT_TRUE(d->hasTruth());
    ASSERT_EQ(d->basis, BasisFunction::Point);
    EXPECT_NE(d->source.find("voxel basis point"), std::string::npos) << d->source;

    ReconstructionSession session(createCpuBackend(Precision::Single));
    session.setDataset(d);
    SolveOptions o;
    o.iterations = 30;
    o.regularizer = RegularizerKind::FiniteDifference;
    o.lambda = c.noise_variance > 0 ? 0.01 : 0.001;
    const Quality iterative = measureQuality(session.solve(o).image, d->truth, false);
    const Quality kb = measureQuality(session.gridKaiserBessel().image, d->truth, true);
    RecordProperty("iterative_psnr_db", std::to_string(iterative.psnr_db));
    RecordProperty("kb_psnr_db", std::to_string(kb.psnr_db));
    EXPECT_GT(iterative.psnr_db, c.min_psnr_db) << c.name << ": iterative " << iterative.psnr_db << " dB";
    EXPECT_GT(iterative.psnr_db, kb.psnr_db) << c.name << ": iterative " << iterative.psnr_db << " KB " << kb.psnr_db;
}

INSTANTIATE_TEST_SUITE_P(Radial, BartData,
                         ::testing::Values(Case{"radial2d", 2, 64, 101, 0, 19.5},
                                           Case{"radial2d_noise", 2, 64, 101, 1e-6, 18},
                                           Case{"radial3d", 3, 16, 300, 0, 15},
                                           Case{"radial3d_noise", 3, 16, 300, 1e-6, 15}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace recon::test
