#include "recon/phantom/coil_sensitivities.hpp"

#include <cmath>

#include "recon/core/conventions.hpp"
#include "recon/core/errors.hpp"

namespace recon {

SyntheticCoils::SyntheticCoils(int dims, int coils, double sigma, double ring) : dims_(dims), coils_(coils) {
    if (dims != 2 && dims != 3) throw InputError("synthetic coils: dims must be 2 or 3");
    if (coils < 1) throw InputError("synthetic coils: at least one coil");
    const int zr = dims == 3 ? 2 : 0;
    for (int kz = -zr; kz <= zr; ++kz)
        for (int ky = -2; ky <= 2; ++ky)
            for (int kx = -2; kx <= 2; ++kx) k_.push_back({double(kx), double(ky), double(kz)});
    // A Gaussian bump's Fourier coefficients exp(-2 pi^2 sigma^2 |k|^2), shifted to the coil's
    // centre p_c; normalised so each bump peaks at about 1.
    double peak = 0;
    for (const auto& k : k_) peak += std::exp(-2 * kPi * kPi * sigma * sigma * (k[0] * k[0] + k[1] * k[1] + k[2] * k[2]));
    for (int c = 0; c < coils; ++c) {
        const double angle = 2 * kPi * c / coils;
        const double px = ring * std::cos(angle), py = ring * std::sin(angle);
        const cdouble coil_phase = std::polar(1.0, 0.7 * c);
        ComplexArray a;
        for (const auto& k : k_) {
            const double amp = std::exp(-2 * kPi * kPi * sigma * sigma * (k[0] * k[0] + k[1] * k[1] + k[2] * k[2])) / peak;
            a.push_back(amp * coil_phase * std::polar(1.0, -2 * kPi * (k[0] * px + k[1] * py)));
        }
        a_.push_back(std::move(a));
    }
}

cdouble SyntheticCoils::value(int coil, double x, double y, double z) const {
    cdouble s = 0;
    const ComplexArray& a = a_[std::size_t(coil)];
    for (std::size_t j = 0; j < k_.size(); ++j)
        s += a[j] * std::polar(1.0, 2 * kPi * (k_[j][0] * x + k_[j][1] * y + k_[j][2] * z));
    return s;
}

ComplexArray SyntheticCoils::maps(const Grid& g) const {
    ComplexArray out(std::size_t(coils_) * g.voxels());
    for (int c = 0; c < coils_; ++c)
        for (int z = 0; z < g.n[2]; ++z)
            for (int y = 0; y < g.n[1]; ++y)
                for (int x = 0; x < g.n[0]; ++x)
                    out[std::size_t(c) * g.voxels() + g.index(x, y, z)] =
                        value(c, voxelPosition(x, g.n[0]), voxelPosition(y, g.n[1]),
                              g.dims == 3 ? voxelPosition(z, g.n[2]) : 0.0);
    return out;
}

ComplexArray SyntheticCoils::kspace(const Phantom& phantom, const Trajectory& t, const Grid& g) const {
    const std::size_t m_count = t.samples();
    ComplexArray out(std::size_t(coils_) * m_count);
    Trajectory shifted = t;
    for (std::size_t j = 0; j < k_.size(); ++j) {
        // (S rho)^(k) = sum_j a_j rho^(k - k_j)
        for (std::size_t m = 0; m < m_count; ++m)
            for (int i = 0; i < 3; ++i) shifted.k[3 * m + std::size_t(i)] = t.k[3 * m + std::size_t(i)] - k_[j][std::size_t(i)];
        const ComplexArray part = phantom.kspace(shifted, g);
        for (int c = 0; c < coils_; ++c) {
            const cdouble a = a_[std::size_t(c)][j];
            cdouble* dst = out.data() + std::size_t(c) * m_count;
            for (std::size_t m = 0; m < m_count; ++m) dst[m] += a * part[m];
        }
    }
    return out;
}

}  // namespace recon
