#include "io_test_support.hpp"

#include <unistd.h>

#include <random>

#ifdef RECONSTUDIO_TEST_ASAN
// libhdf5 allocates sizes a damaged file declares and handles NULL, as C's malloc
// allows; ASan's default is to abort instead. Same contract as without ASan.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace recon::test {
namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "io";
    for (char& c : name)
        if (c == '/') c = '_';
    path_ = fs::path(::testing::TempDir()) / ("reconstudio-io-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(path_);
    fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::vector<std::string> ScratchDir::partialFiles() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) {
        const std::string n = e.path().filename().string();
        if (n.rfind(".", 0) == 0 && n.find(".part-") != std::string::npos) out.push_back(n);
    }
    return out;
}

std::string bartExecutable() {
#ifdef RECONSTUDIO_TEST_BART
    return RECONSTUDIO_TEST_BART;
#else
    return "";
#endif
}

void bart(const ScratchDir& dir, const std::string& args) {
    const std::string cmd = "cd '" + dir.path().string() + "' && '" + bartExecutable() + "' " + args + " > bart.log 2>&1";
    const int rc = std::system(cmd.c_str());
    ASSERT_EQ(rc, 0) << "bart " << args << " failed";
}

Dataset smallDataset(int dims, int coils, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    Dataset d;
    d.name = "small";
    d.source = "test";
    d.grid = dims == 2 ? Grid::make2D(12, 10) : Grid::make3D(8, 6, 4);
    d.grid.fov_mm = {200, 180, dims == 2 ? 5.0 : 120.0};
    const std::size_t readout = 7, readouts = 5, M = readout * readouts;
    d.trajectory.dims = dims;
    d.trajectory.readout_length = int(readout);
    d.trajectory.kind = "test";
    d.trajectory.k.assign(3 * M, 0.0);
    for (std::size_t m = 0; m < M; ++m)
        for (int a = 0; a < dims; ++a) d.trajectory.k[3 * m + a] = u(rng) * d.grid.n[a] / 2.0;
    d.coils = coils;
    for (std::size_t i = 0; i < M * std::size_t(coils); ++i) d.kspace.emplace_back(u(rng), u(rng));
    for (std::size_t m = 0; m < M; ++m) d.density.push_back(0.5 + 0.5 * u(rng));
    for (std::size_t v = 0; v < d.grid.voxels(); ++v) {
        d.truth.emplace_back(u(rng), u(rng));
        d.reference.emplace_back(u(rng), 0.0);
    }
    d.basis = BasisFunction::Point;
    return d;
}

void expectSameDataset(const Dataset& a, const Dataset& b) {
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.grid, b.grid);
    EXPECT_EQ(a.grid.fov_mm, b.grid.fov_mm);
    EXPECT_EQ(a.trajectory.dims, b.trajectory.dims);
    EXPECT_EQ(a.trajectory.k, b.trajectory.k);
    EXPECT_EQ(a.trajectory.kind, b.trajectory.kind);
    EXPECT_EQ(a.trajectory.readout_length, b.trajectory.readout_length);
    EXPECT_EQ(a.coils, b.coils);
    EXPECT_EQ(a.kspace, b.kspace);
    EXPECT_EQ(a.density, b.density);
    EXPECT_EQ(a.truth, b.truth);
    EXPECT_EQ(a.reference, b.reference);
    EXPECT_EQ(a.basis, b.basis);
}

}  // namespace recon::test
