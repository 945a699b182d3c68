#include "recon/sense/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "recon/core/conventions.hpp"
#include "recon/core/errors.hpp"
#include "recon/solvers/normal_cg.hpp"

namespace recon {

CalibrationBlocks fitCalibrationBlocks(Backend& backend, const Dataset& data, int calibration, int iterations,
                                       const Progress& progress) {
    const Grid& g = data.grid;
    if (calibration < 2 || iterations < 1 || iterations > 1000)
        throw InputError("calibration: the block must span at least 2 samples and the fit 1 to 1000 iterations");
    // The block's side per axis: `calibration`, or the whole band of a smaller grid axis.
    CalibrationBlocks out;
    out.coils = data.coils;
    for (int a = 0; a < g.dims; ++a) out.shape[std::size_t(a)] = std::min(calibration, g.n[std::size_t(a)]);
    const BlockShape& side = out.shape;
    // The fit grid: twice the block per axis, so its band |k| < side reaches well past the block.
    const Grid fit = g.dims == 3 ? Grid::make3D(2 * side[0], 2 * side[1], 2 * side[2]) : Grid::make2D(2 * side[0], 2 * side[1]);
    const Trajectory& t = data.trajectory;
    std::vector<std::size_t> inside;
    Trajectory band;
    band.dims = t.dims;
    band.kind = t.kind;
    std::vector<double> phi, phi2;
    for (std::size_t m = 0; m < t.samples(); ++m) {
        bool in = true;
        for (int a = 0; a < g.dims; ++a) in = in && std::abs(t.k[3 * m + std::size_t(a)]) < side[std::size_t(a)];
        if (!in) continue;
        inside.push_back(m);
        for (int a = 0; a < 3; ++a) band.k.push_back(t.k[3 * m + std::size_t(a)]);
        phi.push_back(basisTransform(data.basis, g, t.kx(m), t.ky(m), t.kz(m)));
        phi2.push_back(phi.back() * phi.back());
    }
    if (inside.size() < fit.voxels() / 8)
        throw InputError("calibration: " + std::to_string(inside.size()) + " samples lie within " +
                         std::to_string(side[0]) + " cycles/FOV of the centre, too few to calibrate a " +
                         std::to_string(side[0]) + "-sample block; use a smaller calibration");
    const FourierMethod method{backend.defaultMethod(), 1e-6};
    auto toeplitz = backend.makeToeplitz(fit, band, phi2, method, progress.part(0, 0.1));
    const LinearOperatorPtr f = fourierOperator(backend, band, fit, phi, method, toeplitz);

    std::array<ComplexArray, 3> to_k;
    for (int a = 0; a < g.dims; ++a)
        to_k[std::size_t(a)] = dftMatrix(fit.n[std::size_t(a)], -side[std::size_t(a)] / 2, side[std::size_t(a)], -1, false);
    const std::size_t points = blockPoints(out.shape);
    out.values.resize(std::size_t(data.coils) * points);
    std::vector<double> energy(std::size_t(data.coils), 0.0);
    for (int c = 0; c < data.coils; ++c) {
        ComplexArray values(inside.size());
        double norm2 = 0;
        for (std::size_t i = 0; i < inside.size(); ++i) norm2 += std::norm(values[i] = data.coil(c)[inside[i]]);
        Vector rhs = backend.make(fit.voxels());
        f->adjoint(backend.fromHost(values), rhs);
        NormalEquationsCg cg({{"data", 1.0, f}}, rhs, norm2);
        for (int it = 0; it < iterations; ++it) {
            progress.update(0.1 + 0.9 * (c + double(it) / iterations) / data.coils);
            if (!cg.step()) break;
        }
        ComplexArray img;
        cg.image(img);
        BlockShape shape = fit.n;
        for (int a = 0; a < g.dims; ++a) img = transformAxis(img, shape, a, to_k[std::size_t(a)], side[std::size_t(a)]);
        std::copy(img.begin(), img.end(), out.values.begin() + std::ptrdiff_t(std::size_t(c) * points));
        for (const auto& x : img) energy[std::size_t(c)] += std::norm(x);
    }
    out.strongest = int(std::max_element(energy.begin(), energy.end()) - energy.begin());
    if (!(energy[std::size_t(out.strongest)] > 0)) throw InputError("calibration: the centre of k-space holds no signal");
    return out;
}

FrequencyBlocks taperedCalibrationBlocks(const CalibrationBlocks& blocks) {
    FrequencyBlocks out;
    out.shape = blocks.shape;
    out.sign = 1;
    for (int a = 0; a < 3; ++a) out.first[std::size_t(a)] = -blocks.shape[std::size_t(a)] / 2;
    out.values = blocks.values;
    // The Hann window over the block's frequencies, separable (1 on an axis of one sample).
    std::array<std::vector<double>, 3> window;
    for (int a = 0; a < 3; ++a) {
        const int len = blocks.shape[std::size_t(a)];
        for (int o = 0; o < len; ++o)
            window[std::size_t(a)].push_back(len == 1 ? 1.0 : 0.5 * (1 + std::cos(2 * kPi * double(o - len / 2) / double(len))));
    }
    const std::size_t points = blockPoints(blocks.shape);
    for (std::size_t i = 0; i < out.values.size(); ++i) {
        const std::size_t p = i % points;
        const std::size_t x = p % std::size_t(blocks.shape[0]), y = p / std::size_t(blocks.shape[0]) % std::size_t(blocks.shape[1]),
                          z = p / (std::size_t(blocks.shape[0]) * std::size_t(blocks.shape[1]));
        out.values[i] *= window[0][x] * window[1][y] * window[2][z];
    }
    return out;
}

}  // namespace recon
