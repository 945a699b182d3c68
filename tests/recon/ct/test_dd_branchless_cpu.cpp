// The branchless DD on the CPU against the analytic chords of a uniform box, against
// the DD's definition evaluated by brute force (every slice, voxel and cell's overlap),
// its adjoint identity, its operator form, and refusal of bad geometries.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/ct/dd_branchless_cpu.hpp"
#include "tests/recon/ct/ct_reference.hpp"

namespace recon::ct {
namespace {

using test::ct::chordInBox;
using test::ct::detectorAt;
using test::ct::Point;
using test::ct::sourceAt;

std::vector<float> randomVolume(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// The DD's definition term by term: for each cell, slice and voxel, the overlap of the
// voxel with the cell's footprint (η from the rays through the cell's u edges, ζ from its
// v edges on the centre column's ray), over the footprint's area, times the centre ray's
// length per slice. Geometry from geometry.hpp's conventions, in float64.
std::vector<double> bruteForceDd(const CtGeometry& g, const std::vector<float>& f) {
    const auto& b = g.beam;
    const auto& vol = g.volume;
    const Point lo = test::ct::volumeLow(vol);
    const bool planar = b.detector_rows == 1 && vol.size[2] == 1;
    auto overlap = [](double p, double q, int j) {
        const double a = std::min(p, q), c = std::max(p, q);
        return std::max(0.0, std::min(c, j + 1.0) - std::max(a, double(j)));
    };
    std::vector<double> out(b.samples(), 0.0);
    for (std::size_t view = 0; view < b.views(); ++view) {
        const double beta = b.angles_rad[view];
        const Point s = sourceAt(b, beta);
        const int a = std::abs(std::cos(beta)) >= std::abs(std::sin(beta)) ? 0 : 1, bb = 1 - a;
        for (int iv = 0; iv < b.detector_rows; ++iv)
            for (int iu = 0; iu < b.detector_columns; ++iu) {
                const Point pc = detectorAt(b, beta, b.pixelU(iu), planar ? 0.0 : b.pixelV(iv));
                const Point plo = detectorAt(b, beta, b.pixelU(iu) - 0.5 * b.pixel_u_mm, 0.0);
                const Point phi = detectorAt(b, beta, b.pixelU(iu) + 0.5 * b.pixel_u_mm, 0.0);
                const double len = std::sqrt((pc[0] - s[0]) * (pc[0] - s[0]) + (pc[1] - s[1]) * (pc[1] - s[1]) +
                                             (pc[2] - s[2]) * (pc[2] - s[2]));
                const double per_slice = vol.voxel_mm[a] * len / std::abs(pc[a] - s[a]);
                double sum = 0.0;
                for (int i = 0; i < vol.size[a]; ++i) {
                    const double plane = vol.centre(a, i);
                    auto eta = [&](const Point& p) {
                        const double t = (plane - s[a]) / (p[a] - s[a]);
                        return (s[bb] + t * (p[bb] - s[bb]) - lo[bb]) / vol.voxel_mm[bb];
                    };
                    const double e0 = eta(plo), e1 = eta(phi);
                    const double tc = (plane - s[a]) / (pc[a] - s[a]);
                    const double z0 = planar ? 0.0 : (tc * (b.pixelV(iv) - 0.5 * b.pixel_v_mm) - lo[2]) / vol.voxel_mm[2];
                    const double z1 = planar ? 1.0 : (tc * (b.pixelV(iv) + 0.5 * b.pixel_v_mm) - lo[2]) / vol.voxel_mm[2];
                    const double area = std::abs(e1 - e0) * std::abs(z1 - z0);
                    for (int k = 0; k < vol.size[2]; ++k) {
                        const double ok = overlap(z0, z1, k);
                        if (ok == 0.0) continue;
                        for (int j = 0; j < vol.size[bb]; ++j) {
                            const double oj = overlap(e0, e1, j);
                            if (oj == 0.0) continue;
                            const int x = a == 0 ? i : j, y = a == 0 ? j : i;
                            sum += oj * ok / area * f[std::size_t(x) + std::size_t(vol.size[0]) * (y + std::size_t(vol.size[1]) * k)];
                        }
                    }
                }
                out[(view * b.detector_rows + iv) * b.detector_columns + iu] = per_slice * sum;
            }
    }
    return out;
}

double maxAbs(const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

void expectMatchesBruteForce(const CtGeometry& g, unsigned seed) {
    const auto f = randomVolume(g.volume.voxels(), seed);
    BranchlessDdCpu dd(g);
    std::vector<float> p(dd.samples());
    dd.project(f.data(), p.data());
    const auto ref = bruteForceDd(g, f);
    const double scale = maxAbs(ref);
    ASSERT_GT(scale, 1.0);
    double worst = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) worst = std::max(worst, std::abs(p[k] - ref[k]));
    // float32 output of a float64 computation: a few ulps of the largest value.
    EXPECT_LT(worst / scale, 1e-6) << "largest difference " << worst << " of " << scale;
}

TEST(CtBranchlessDd, FanBeamEqualsTheOverlapDefinition) { expectMatchesBruteForce(test::ct::fanGeometry(12, 18, 16), 1); }

TEST(CtBranchlessDd, ConeBeamEqualsTheOverlapDefinition) {
    expectMatchesBruteForce(test::ct::coneGeometry({9, 8, 7}, 14, 10, 12), 2);
}

// A uniform box filling the volume (1/mm): a ray's value is its chord. Cells whose every
// ray crosses the whole volume along the view's slicing axis (entering and leaving through
// the two faces across it, half a voxel from the other faces) are exact: the footprint lies
// inside every slice and L · n_a is the centre ray's chord. Elsewhere DD averages the box
// over the cell's footprint slice by slice; the sub-ray average of the chords over the
// cell differs from it where a ray leaves through a side face inside a slab that DD
// treats as its centre plane: at most one slab's length per crossing, two crossings; on
// these scans it is 0.12 slab lengths at worst, and the test allows 0.25.
void expectBoxChords(const CtGeometry& g, int subrays_v) {
    const auto& b = g.beam;
    const auto& vol = g.volume;
    const bool planar = b.detector_rows == 1 && vol.size[2] == 1;
    Point lo = test::ct::volumeLow(vol), hi = test::ct::volumeHigh(vol);
    if (planar) lo[2] = -1e9, hi[2] = 1e9;  // the 2D chord
    std::vector<float> ones(vol.voxels(), 1.0f), p(b.samples());
    BranchlessDdCpu(g).project(ones.data(), p.data());
    int interior = 0, others = 0;
    double worst_interior = 0, worst_other = 0;
    for (std::size_t view = 0; view < b.views(); ++view) {
        const double beta = b.angles_rad[view];
        const Point s = sourceAt(b, beta);
        const int a = std::abs(std::cos(beta)) >= std::abs(std::sin(beta)) ? 0 : 1;
        // Does the ray s -> p cross the whole volume along a, away from the side faces?
        auto crossesAlongA = [&](const Point& p) {
            for (double plane : {lo[a], hi[a]}) {
                const double t = (plane - s[a]) / (p[a] - s[a]);
                for (int d = 0; d < 3; ++d) {
                    if (d == a || (planar && d == 2)) continue;
                    const double x = s[d] + t * (p[d] - s[d]), margin = 0.5 * vol.voxel_mm[d];
                    if (x < lo[d] + margin || x > hi[d] - margin) return false;
                }
            }
            return true;
        };
        for (int iv = 0; iv < b.detector_rows; ++iv)
            for (int iu = 0; iu < b.detector_columns; ++iu) {
                const double u = b.pixelU(iu), v = planar ? 0.0 : b.pixelV(iv);
                const double dd = p[(view * b.detector_rows + iv) * b.detector_columns + iu];
                bool inside = true;
                for (double du : {-0.5, 0.5})
                    for (double dv : {-0.5, 0.5})
                        inside = inside && crossesAlongA(detectorAt(b, beta, u + du * b.pixel_u_mm,
                                                                    planar ? 0.0 : v + dv * b.pixel_v_mm));
                const Point pc = detectorAt(b, beta, u, v);
                if (inside) {
                    const double chord = chordInBox(s, pc, lo, hi);
                    worst_interior = std::max(worst_interior, std::abs(dd - chord) / chord);
                    ++interior;
                    continue;
                }
                double mean = 0;
                const int nu_sub = 16, nv_sub = planar ? 1 : subrays_v;
                for (int su = 0; su < nu_sub; ++su)
                    for (int sv = 0; sv < nv_sub; ++sv) {
                        const double uu = u + ((su + 0.5) / nu_sub - 0.5) * b.pixel_u_mm;
                        const double vv = planar ? 0.0 : v + ((sv + 0.5) / nv_sub - 0.5) * b.pixel_v_mm;
                        mean += chordInBox(s, detectorAt(b, beta, uu, vv), lo, hi);
                    }
                mean /= nu_sub * nv_sub;
                const double slab = vol.voxel_mm[a] * std::sqrt((pc[0] - s[0]) * (pc[0] - s[0]) + (pc[1] - s[1]) * (pc[1] - s[1]) +
                                                                (pc[2] - s[2]) * (pc[2] - s[2])) / std::abs(pc[a] - s[a]);
                worst_other = std::max(worst_other, std::abs(dd - mean) / slab);
                ++others;
            }
    }
    EXPECT_GT(interior, int(b.samples() / 10));
    EXPECT_LT(worst_interior, 1e-6) << "relative error of the exact cells";
    EXPECT_LE(worst_other, 0.25) << "edge cells, in slab lengths (measured 0.12)";
    std::printf("box: %d exact cells (worst %.2e relative), %d edge cells (worst %.3f slab lengths)\n", interior,
                worst_interior, others, worst_other);
}

TEST(CtBranchlessDd, FanBeamGivesTheChordsOfABox) { expectBoxChords(test::ct::fanGeometry(), 1); }

TEST(CtBranchlessDd, ConeBeamGivesTheChordsOfABox) { expectBoxChords(test::ct::coneGeometry(), 8); }

double adjointMismatch(const CtGeometry& g, int threads) {
    BranchlessDdCpu dd(g);
    const auto x = randomVolume(dd.voxels(), 3), y = randomVolume(dd.samples(), 4);
    std::vector<float> ax(dd.samples()), aty(dd.voxels());
    dd.project(x.data(), ax.data(), threads);
    dd.backproject(y.data(), aty.data(), threads);
    double lhs = 0, rhs = 0;
    for (std::size_t k = 0; k < ax.size(); ++k) lhs += double(ax[k]) * y[k];
    for (std::size_t k = 0; k < aty.size(); ++k) rhs += double(x[k]) * aty[k];
    return std::abs(lhs - rhs) / std::abs(lhs);
}

TEST(CtBranchlessDd, BackprojectorIsTheAdjoint) {
    // float64 inside, float32 in and out: the two inner products agree to float rounding.
    EXPECT_LT(adjointMismatch(test::ct::fanGeometry(), 0), 1e-6);
    EXPECT_LT(adjointMismatch(test::ct::coneGeometry(), 0), 1e-6);
    EXPECT_LT(adjointMismatch(test::ct::coneGeometry({16, 16, 16}, 24, 20, 7), 1), 1e-6);
}

TEST(CtBranchlessDd, OneThreadGivesTheSameNumbersAsAll) {
    const CtGeometry g = test::ct::coneGeometry();
    BranchlessDdCpu dd(g);
    const auto x = randomVolume(dd.voxels(), 5), y = randomVolume(dd.samples(), 6);
    std::vector<float> p1(dd.samples()), pn(dd.samples()), b1(dd.voxels()), bn(dd.voxels());
    dd.project(x.data(), p1.data(), 1);
    dd.project(x.data(), pn.data(), 0);
    dd.backproject(y.data(), b1.data(), 1);
    dd.backproject(y.data(), bn.data(), 0);
    EXPECT_EQ(p1, pn);
    EXPECT_EQ(b1, bn);
}

TEST(CtBranchlessDd, OperatorProjectsRealAndImaginaryPartsAlike) {
    const CtGeometry g = test::ct::coneGeometry({10, 12, 8}, 16, 12, 9);
    auto cpu = createCpuBackend(Precision::Double, 2);
    auto op = branchlessDdOperator(*cpu, g);
    BranchlessDdCpu dd(g);
    const auto re = randomVolume(dd.voxels(), 7), im = randomVolume(dd.voxels(), 8);
    ComplexArray x(dd.voxels());
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = cdouble(re[k], im[k]);
    const ComplexArray y = applyForward(*op, x);
    std::vector<float> pre(dd.samples()), pim(dd.samples());
    dd.project(re.data(), pre.data());
    dd.project(im.data(), pim.data());
    ASSERT_EQ(y.size(), dd.samples());
    for (std::size_t k = 0; k < y.size(); ++k) {
        ASSERT_EQ(y[k].real(), pre[k]);
        ASSERT_EQ(y[k].imag(), pim[k]);
    }
    // <A x, w> = <x, A^H w> through the operator, complex vectors.
    ComplexArray w(dd.samples());
    const auto wr = randomVolume(w.size(), 9), wi = randomVolume(w.size(), 10);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = cdouble(wr[k], wi[k]);
    const ComplexArray ahw = applyAdjoint(*op, w);
    cdouble lhs = 0, rhs = 0;
    for (std::size_t k = 0; k < y.size(); ++k) lhs += std::conj(y[k]) * w[k];
    for (std::size_t k = 0; k < x.size(); ++k) rhs += std::conj(x[k]) * ahw[k];
    EXPECT_LT(std::abs(lhs - rhs) / std::abs(lhs), 1e-6);
}

TEST(CtBranchlessDd, CancelStopsTheProjection) {
    const CtGeometry g = test::ct::coneGeometry();
    BranchlessDdCpu dd(g);
    std::vector<float> x(dd.voxels(), 1.0f), p(dd.samples());
    std::atomic<bool> cancel{true};
    Progress progress;
    progress.cancel = &cancel;
    EXPECT_THROW(dd.project(x.data(), p.data(), 0, progress), Cancelled);
    EXPECT_THROW(dd.backproject(p.data(), x.data(), 0, progress), Cancelled);
}

TEST(CtBranchlessDd, RefusesBadGeometryNamingIt) {
    auto expectRefused = [](CtGeometry g, const char* words) {
        try {
            BranchlessDdCpu dd(g);
            ADD_FAILURE() << "accepted a geometry with " << words;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    CtGeometry g = test::ct::coneGeometry();
    g.beam.source_to_detector_mm = 0.8 * g.beam.source_to_isocentre_mm;
    expectRefused(g, "behind the isocentre");
    g = test::ct::coneGeometry();
    g.beam.source_to_isocentre_mm = 0.0;
    expectRefused(g, "source-to-isocentre");
    g = test::ct::coneGeometry();
    g.beam.angles_rad[3] = std::nan("");
    expectRefused(g, "angle of view 3");
    g = test::ct::coneGeometry();
    g.volume.voxel_mm[1] = -1.0;
    expectRefused(g, "voxel size y");
    g = test::ct::coneGeometry();
    g.volume.size = {200, 200, 16};  // reaches the source's orbit (radius 110 mm)
    expectRefused(g, "reaches the source");
    g = test::ct::coneGeometry();
    g.beam.angles_rad.clear();
    expectRefused(g, "number of views");
}

}  // namespace
}  // namespace recon::ct
