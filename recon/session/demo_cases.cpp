#include "recon/session/demo_cases.hpp"

#include <cmath>

#include "recon/core/errors.hpp"
#include "recon/phantom/coil_sensitivities.hpp"
#include "recon/phantom/shepp_logan.hpp"

namespace recon {
namespace {

CaseSpec make(std::string name, TrajectoryKind kind, int n, int readouts, double snr, double lambda,
              std::string reg = "fd") {
    CaseSpec c;
    c.name = std::move(name);
    c.trajectory.kind = kind;
    c.trajectory.n = n;
    c.trajectory.readouts = readouts;
    c.snr_db = snr;
    c.lambda = lambda;
    c.regularizer = std::move(reg);
    return c;
}

CaseSpec multiCoil(CaseSpec c, int coils) {
    c.coils = coils;
    c.reference = false;
    return c;
}

}  // namespace

std::vector<CaseSpec> demoCases() {
    // lambda multiplies s = Q(0); tuned by sweeps of `reconstudio-cli compare` (README).
    // Every case carries a reference scan at another contrast, so the anatomically
    // weighted prior of the paper is the default; fd and tikhonov remain a flag away.
    return {
        // The acceptance case: 64^3, 1,024 spokes x 64 samples (M = N^3 / 4), noiseless.
        make("default", TrajectoryKind::Radial3D, 64, 1024, 0, 30, "anatomical"),
        make("radial-3d-noisy", TrajectoryKind::Radial3D, 64, 1024, 30, 200, "anatomical"),
        make("stack-of-spirals", TrajectoryKind::StackOfSpirals, 64, 8, 0, 30, "anatomical"),
        make("radial-2d", TrajectoryKind::GoldenAngleRadial2D, 128, 96, 0, 30, "anatomical"),
        make("radial-2d-noisy", TrajectoryKind::GoldenAngleRadial2D, 128, 96, 30, 30, "anatomical"),
        make("spiral-2d", TrajectoryKind::Spiral2D, 128, 16, 0, 30, "anatomical"),
        make("spiral-2d-noisy", TrajectoryKind::Spiral2D, 128, 16, 30, 30, "anatomical"),
        make("small-2d", TrajectoryKind::GoldenAngleRadial2D, 48, 40, 0, 0.02, "fd"),
        // The paper's size: 128^3 with about 284,600 samples (3D radial, 2,224 spokes x 128).
        make("paper-128", TrajectoryKind::Radial3D, 128, 2224, 0, 30, "anatomical"),
        // 8 synthetic coils, 48 golden-angle spokes (about 4x below Nyquist): where SENSE
        // uses what the coils share and coil-by-coil sum of squares cannot.
        multiCoil(make("radial-2d-8coil", TrajectoryKind::GoldenAngleRadial2D, 128, 48, 0, 0.05, "fd"), 8),
    };
}

CaseSpec demoCase(const std::string& name) {
    std::string names;
    for (const auto& c : demoCases()) {
        if (c.name == name) return c;
        names += (names.empty() ? "" : ", ") + c.name;
    }
    throw InputError("unknown demo case '" + name + "' (available: " + names + ")");
}

std::shared_ptr<Dataset> simulate(const CaseSpec& spec) {
    auto d = std::make_shared<Dataset>();
    const int dims = dimsOf(spec.trajectory.kind);
    d->name = spec.name;
    d->grid = Grid::cube(dims, spec.trajectory.n);
    d->trajectory = makeTrajectory(spec.trajectory);
    const Phantom phantom = dims == 3 ? Phantom::sheppLogan3D() : Phantom::sheppLogan2D();
    d->truth = phantom.image(d->grid, spec.truth_subsamples);
    if (spec.coils > 1) {
        const SyntheticCoils coils(dims, spec.coils);
        d->coils = spec.coils;
        d->kspace = coils.kspace(phantom, d->trajectory, d->grid);
        const ComplexArray maps = coils.maps(d->grid);
        const std::size_t voxels = d->grid.voxels();
        for (std::size_t v = 0; v < voxels; ++v) {
            double rss = 0;
            for (int c = 0; c < spec.coils; ++c) rss += std::norm(maps[std::size_t(c) * voxels + v]);
            d->truth[v] = std::abs(d->truth[v]) * std::sqrt(rss);
        }
    } else {
        d->kspace = phantom.kspace(d->trajectory, d->grid);
    }
    if (spec.snr_db > 0) addNoise(d->kspace, spec.snr_db, spec.seed);
    if (spec.reference) d->reference = phantom.referenceContrast().image(d->grid, spec.truth_subsamples);
    d->source = "analytic Shepp-Logan (" + std::to_string(dims) + "D, exact k-space), " + d->trajectory.kind + ", " +
                (spec.coils > 1 ? std::to_string(spec.coils) + " synthetic coils, " : std::string()) +
                (spec.snr_db > 0 ? "SNR " + std::to_string(int(spec.snr_db)) + " dB" : std::string("noiseless"));
    return d;
}

}  // namespace recon

namespace recon {

Quality cartesianFloor(const CaseSpec& spec, const Dataset& data, Backend& backend) {
    const Grid& g = data.grid;
    Trajectory cart;
    cart.dims = g.dims;
    cart.kind = "cartesian";
    for (int z = 0; z < g.n[2]; ++z)
        for (int y = 0; y < g.n[1]; ++y)
            for (int x = 0; x < g.n[0]; ++x)
                cart.k.insert(cart.k.end(), {double(x - g.n[0] / 2), double(y - g.n[1] / 2),
                                             g.dims == 3 ? double(z - g.n[2] / 2) : 0.0});
    const Phantom phantom = g.dims == 3 ? Phantom::sheppLogan3D() : Phantom::sheppLogan2D();
    ComplexArray d = phantom.kspace(cart, g);
    for (std::size_t m = 0; m < d.size(); ++m)
        d[m] /= basisTransform(data.basis, g, cart.kx(m), cart.ky(m), cart.kz(m)) * double(g.voxels());
    ComplexArray img;
    backend.adjointSum(cart, d, SampleGrid::image(g), img, FourierMethod{"nufft", 1e-7});
    (void)spec;
    return measureQuality(img, data.truth, false);
}

}  // namespace recon
