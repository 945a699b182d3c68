#include "recon/trajectory/trajectories.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "recon/core/conventions.hpp"
#include "recon/core/errors.hpp"

namespace recon {
namespace {

// Positions along a full-diameter readout of `readout` samples: symmetric about
// k = 0 at half-sample offsets (k = 0 itself is never sampled, as in BART),
// spanning the band [-n/2, n/2).
double radialPosition(int j, int readout, int n) { return (j - readout / 2.0 + 0.5) * double(n) / readout; }

void checkPositive(int v, const char* what) {
    if (v <= 0) throw InputError(std::string(what) + " must be positive");
    if (v > 1 << 24) throw InputError(std::string(what) + " is absurdly large");
}

// One variable-density spiral interleave in the plane, rotated by `angle`:
// r = kmax tau^power, theta = 2 pi turns tau + angle, tau in [0, 1).
void appendSpiral(Trajectory& t, int n, int readout, int turns, double power, double angle, double kz) {
    const double kmax = 0.5 * n * 0.999;  // stay inside [-n/2, n/2)
    for (int j = 0; j < readout; ++j) {
        double tau = double(j) / readout;
        double r = kmax * std::pow(tau, power);
        double th = 2 * kPi * turns * tau + angle;
        t.k.insert(t.k.end(), {r * std::cos(th), r * std::sin(th), kz});
    }
}

int spiralTurns(int n, int interleaves, double power) {
    // Nyquist at the edge: ring spacing kmax * power / turns / interleaves <= 1 cycle/FOV
    // for the fully sampled design (nyquistReadouts interleaves).
    int full = nyquistReadouts(TrajectoryKind::Spiral2D, n);
    (void)interleaves;
    return std::max(1, int(std::ceil(0.5 * n * power / full)));
}

int spiralReadout(int n, int turns) {
    // Along-path spacing <= 1 cycle/FOV at the edge: path per unit tau ~ 2 pi turns kmax.
    return int(std::ceil(2 * kPi * turns * 0.5 * n * 1.05));
}

}  // namespace

std::string toString(TrajectoryKind k) {
    switch (k) {
        case TrajectoryKind::Radial3D: return "radial-3d";
        case TrajectoryKind::StackOfSpirals: return "stack-of-spirals";
        case TrajectoryKind::GoldenAngleRadial2D: return "radial-2d";
        case TrajectoryKind::Spiral2D: return "spiral-2d";
    }
    return "?";
}

TrajectoryKind parseTrajectoryKind(const std::string& s) {
    if (s == "radial-3d" || s == "kooshball" || s == "radial3d") return TrajectoryKind::Radial3D;
    if (s == "stack-of-spirals" || s == "sos") return TrajectoryKind::StackOfSpirals;
    if (s == "radial-2d" || s == "golden-angle" || s == "radial2d") return TrajectoryKind::GoldenAngleRadial2D;
    if (s == "spiral-2d" || s == "spiral") return TrajectoryKind::Spiral2D;
    throw InputError("unknown trajectory kind '" + s + "' (expected radial-3d, stack-of-spirals, radial-2d or spiral-2d)");
}

int dimsOf(TrajectoryKind k) {
    return (k == TrajectoryKind::Radial3D || k == TrajectoryKind::StackOfSpirals) ? 3 : 2;
}

int nyquistReadouts(TrajectoryKind kind, int n) {
    switch (kind) {
        // Spokes so that neighbouring spoke tips are 1 cycle/FOV apart: pi n / 2 in 2D,
        // (pi/2) n^2 ... for full-diameter spokes on a hemisphere: 2 pi (n/2)^2 / 1.
        case TrajectoryKind::GoldenAngleRadial2D: return int(std::ceil(kPi * n / 2));
        case TrajectoryKind::Radial3D: return int(std::ceil(2 * kPi * (n / 2.0) * (n / 2.0)));
        case TrajectoryKind::Spiral2D:
        case TrajectoryKind::StackOfSpirals: return std::max(4, n / 4);
    }
    return n;
}

namespace {
double sampleRadius(const Trajectory& t, std::size_t m) {
    return std::sqrt(t.kx(m) * t.kx(m) + t.ky(m) * t.ky(m) + t.kz(m) * t.kz(m));
}

// The positions along readout `first`'s line through the centre (k = s u, u the direction of its sample
// farthest from the centre), in readout order; false when a sample lies off that line or all are at 0.
bool spokePositions(const Trajectory& t, std::size_t first, std::size_t length, std::vector<double>& along) {
    std::array<double, 3> u{};
    double kmax = 0;
    for (std::size_t m = first; m < first + length; ++m) {
        const double k = sampleRadius(t, m);
        if (k > kmax) {
            kmax = k;
            u = {t.kx(m) / k, t.ky(m) / k, t.kz(m) / k};
        }
    }
    if (kmax == 0) return false;
    along.resize(length);
    for (std::size_t j = 0; j < length; ++j) {
        const std::size_t m = first + j;
        const double a = t.kx(m) * u[0] + t.ky(m) * u[1] + t.kz(m) * u[2];
        const double ox = t.kx(m) - a * u[0], oy = t.ky(m) - a * u[1], oz = t.kz(m) - a * u[2];
        if (std::sqrt(ox * ox + oy * oy + oz * oz) > 1e-3 * kmax) return false;
        along[j] = a;
    }
    return true;
}

std::size_t spokeLength(const Trajectory& t) {
    const std::size_t length = t.readout_length > 1 ? std::size_t(t.readout_length) : 0;
    return length == 0 || t.samples() == 0 || t.samples() % length != 0 ? 0 : length;
}

// The antiderivative of |s|^(dims-1): sign(s) |s|^dims / dims.
double shellIntegral(double s, int dims) { return std::copysign(std::pow(std::abs(s), dims) / dims, s); }
}  // namespace

double radialUndersampling(const Trajectory& t, const Grid& grid) {
    const std::size_t length = spokeLength(t);
    if (length == 0) return 0;
    double halves = 0;
    std::vector<double> along;
    for (std::size_t r = 0; r < t.samples() / length; ++r) {
        if (!spokePositions(t, r * length, length, along)) return 0;
        const double kmax = *std::max_element(along.begin(), along.end());  // the farthest sample, at +kmax
        const bool negative = std::any_of(along.begin(), along.end(), [&](double a) { return a < -0.25 * kmax; });
        halves += negative ? 2 : 1;
    }
    int n = 0;
    for (int a = 0; a < grid.dims; ++a) n = std::max(n, grid.n[a]);
    const double nyquistFull = grid.dims == 2 ? kPi * n / 2 : kPi * n * n / 2;  // as nyquistReadouts
    return 2 * nyquistFull / halves;
}

std::vector<double> radialDensityWeights(const Trajectory& t, int dims) {
    std::vector<double> w(t.samples());
    double outer = 0;  // the radius the cells reach
    const std::size_t length = spokeLength(t);
    std::vector<double> along;
    bool cells = length > 1;
    for (std::size_t r = 0; cells && r < t.samples() / length; ++r) {
        cells = spokePositions(t, r * length, length, along);
        for (std::size_t j = 0; cells && j < length; ++j) {
            // The cell between the midpoints to the neighbours; an end sample's reaches as far beyond
            // it, but not across the centre (a spoke that starts there covers one side only).
            const double s = along[j];
            const auto end = [s](double e) { return e * s < 0 || s == 0 ? 0.0 : e; };
            const double lo = j > 0 ? 0.5 * (along[j - 1] + s) : end(s - 0.5 * (along[1] - s));
            const double hi = j + 1 < length ? 0.5 * (s + along[j + 1]) : end(s + 0.5 * (s - along[j - 1]));
            // The midpoint rule on the spoke, except on the cell around the centre, where |s|^(dims-1)
            // vanishes (and in 2D has a kink): there the cell's exact share.
            const bool centre = lo * hi < 0 || s == 0;
            w[r * length + j] = centre ? std::abs(shellIntegral(hi, dims) - shellIntegral(lo, dims))
                                       : std::pow(std::abs(s), dims - 1) * std::abs(hi - lo);
            outer = std::max({outer, std::abs(lo), std::abs(hi)});
        }
    }
    if (!cells) {  // no spokes to follow: the density's point value |k|^(dims-1)
        outer = 0;
        for (std::size_t m = 0; m < w.size(); ++m) {
            const double k = sampleRadius(t, m);
            w[m] = std::pow(k, dims - 1);
            outer = std::max(outer, k);
        }
    }
    double sum = 0;
    for (double v : w) sum += v;
    const double volume = dims == 3 ? 4.0 / 3.0 * kPi * outer * outer * outer : kPi * outer * outer;
    for (auto& v : w) v *= sum > 0 ? volume / sum : 0.0;
    return w;
}

Trajectory radial3D(int n, int spokes, int readout) {
    checkPositive(n, "grid size");
    checkPositive(spokes, "number of spokes");
    checkPositive(readout, "readout length");
    // 2D golden means (Chan et al. 2009): directions on the upper hemisphere,
    // cos(polar) = frac(i g1), azimuth = 2 pi frac(i g2); any prefix is near-uniform.
    const double g1 = 0.465571231876768, g2 = 0.682327803828019;
    Trajectory t;
    t.dims = 3;
    t.kind = toString(TrajectoryKind::Radial3D);
    t.readout_length = readout;
    t.k.reserve(std::size_t(3) * spokes * readout);
    for (int i = 0; i < spokes; ++i) {
        double cz = std::fmod(i * g1, 1.0);
        double az = 2 * kPi * std::fmod(i * g2, 1.0);
        double sz = std::sqrt(std::max(0.0, 1 - cz * cz));
        double d[3] = {sz * std::cos(az), sz * std::sin(az), cz};
        for (int j = 0; j < readout; ++j) {
            double r = radialPosition(j, readout, n);
            t.k.insert(t.k.end(), {r * d[0], r * d[1], r * d[2]});
        }
    }
    return t;
}

Trajectory goldenAngleRadial2D(int n, int spokes, int readout) {
    checkPositive(n, "grid size");
    checkPositive(spokes, "number of spokes");
    checkPositive(readout, "readout length");
    const double golden = kPi / ((1 + std::sqrt(5.0)) / 2);  // 111.246 degrees
    Trajectory t;
    t.dims = 2;
    t.kind = toString(TrajectoryKind::GoldenAngleRadial2D);
    t.readout_length = readout;
    t.k.reserve(std::size_t(3) * spokes * readout);
    for (int i = 0; i < spokes; ++i) {
        double a = std::fmod(i * golden, 2 * kPi);
        for (int j = 0; j < readout; ++j) {
            double r = radialPosition(j, readout, n);
            t.k.insert(t.k.end(), {r * std::cos(a), r * std::sin(a), 0.0});
        }
    }
    return t;
}

Trajectory variableDensitySpiral2D(int n, int interleaves, int readout, double power) {
    checkPositive(n, "grid size");
    checkPositive(interleaves, "number of interleaves");
    if (!(power >= 1.0 && power <= 4.0)) throw InputError("spiral density power must be in [1, 4]");
    const int turns = spiralTurns(n, interleaves, power);
    if (readout <= 0) readout = spiralReadout(n, turns);
    Trajectory t;
    t.dims = 2;
    t.kind = toString(TrajectoryKind::Spiral2D);
    t.readout_length = readout;
    for (int i = 0; i < interleaves; ++i) appendSpiral(t, n, readout, turns, power, 2 * kPi * i / interleaves, 0.0);
    return t;
}

Trajectory stackOfSpirals(int n, int partitions, int interleaves, int readout, double power) {
    checkPositive(partitions, "number of partitions");
    Trajectory plane = variableDensitySpiral2D(n, interleaves, readout, power);
    Trajectory t;
    t.dims = 3;
    t.kind = toString(TrajectoryKind::StackOfSpirals);
    t.readout_length = plane.readout_length;
    t.k.reserve(plane.k.size() * partitions);
    for (int p = 0; p < partitions; ++p) {
        // Cartesian in kz: partitions spread evenly over [-n/2, n/2).
        double kz = (p - partitions / 2) * double(n) / partitions;
        for (std::size_t m = 0; m < plane.samples(); ++m) t.k.insert(t.k.end(), {plane.kx(m), plane.ky(m), kz});
    }
    return t;
}

Trajectory makeTrajectory(const TrajectorySpec& s) {
    const double us = s.undersampling > 0 ? s.undersampling : 1.0;
    int readouts = s.readouts > 0 ? s.readouts : std::max(1, int(std::lround(nyquistReadouts(s.kind, s.n) / us)));
    switch (s.kind) {
        case TrajectoryKind::Radial3D: return radial3D(s.n, readouts, s.readout > 0 ? s.readout : s.n);
        case TrajectoryKind::GoldenAngleRadial2D: return goldenAngleRadial2D(s.n, readouts, s.readout > 0 ? s.readout : s.n);
        case TrajectoryKind::Spiral2D: return variableDensitySpiral2D(s.n, readouts, s.readout, s.density_power);
        case TrajectoryKind::StackOfSpirals: return stackOfSpirals(s.n, s.n, readouts, s.readout, s.density_power);
    }
    throw InputError("unknown trajectory kind");
}

}  // namespace recon
