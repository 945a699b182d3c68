#include "ct_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "recon/ct/dd_projector.hpp"
#include "recon/ct/phantom.hpp"
#include "tests/recon/ct/ct_reference.hpp"

namespace recon::ct::test {

CtGeometry fanBeam(int n, int columns, int views) {
    CtGeometry g;
    g.beam.source_to_isocentre_mm = 400;
    g.beam.source_to_detector_mm = 600;
    g.beam.detector_columns = columns;
    g.beam.detector_rows = 1;
    g.beam.pixel_u_mm = 600.0 / 400.0;
    g.beam.angles_rad = fullScanAngles(views);
    g.volume.size = {n, n, 1};
    return g;
}

CtGeometry coneBeam(int n, int columns, int rows, int views) {
    CtGeometry g;
    g.beam.source_to_isocentre_mm = 300;
    g.beam.source_to_detector_mm = 450;
    g.beam.detector_columns = columns;
    g.beam.detector_rows = rows;
    g.beam.pixel_u_mm = g.beam.pixel_v_mm = 450.0 / 300.0;
    g.beam.angles_rad = fullScanAngles(views);
    g.volume.size = {n, n, n};
    return g;
}

double boxLineIntegral(const std::array<double, 3>& lo, const std::array<double, 3>& hi, double attenuation,
                       const std::array<double, 3>& point, const std::array<double, 3>& direction, int dims) {
    // The chord of a segment long enough to cross any test volume (slab clipping, ct_reference.hpp);
    // a 2D box has no extent along z.
    const double norm = std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
    const double reach = 1e6 / norm;
    std::array<double, 3> from, to, box_lo = lo, box_hi = hi;
    for (int a = 0; a < 3; ++a) {
        from[a] = point[a] - reach * direction[a];
        to[a] = point[a] + reach * direction[a];
    }
    if (dims == 2) {
        box_lo[2] = std::min(from[2], to[2]) - 1.0;
        box_hi[2] = std::max(from[2], to[2]) + 1.0;
    }
    return attenuation * recon::test::ct::chordInBox(from, to, box_lo, box_hi);
}

std::vector<double> projectBox(const CtGeometry& g, const std::array<double, 3>& lo, const std::array<double, 3>& hi,
                               double attenuation, int sub) {
    const ConeBeamGeometry& b = g.beam;
    const int dims = b.fanBeam() && g.volume.size[2] == 1 ? 2 : 3;
    const int sv = b.fanBeam() ? 1 : sub;
    std::vector<double> out(b.samples());
    for (std::size_t view = 0; view < b.views(); ++view)
        for (int iv = 0; iv < b.detector_rows; ++iv)
            for (int iu = 0; iu < b.detector_columns; ++iu) {
                double acc = 0;
                for (int bb = 0; bb < sv; ++bb)
                    for (int a = 0; a < sub; ++a) {
                        const double u = b.pixelU(iu) + ((a + 0.5) / sub - 0.5) * b.pixel_u_mm;
                        const double v = b.fanBeam() ? b.pixelV(iv) : b.pixelV(iv) + ((bb + 0.5) / sv - 0.5) * b.pixel_v_mm;
                        const Ray r = rayThrough(b, view, u, v);
                        acc += boxLineIntegral(lo, hi, attenuation, r.source, r.direction, dims);
                    }
                out[(view * b.detector_rows + iv) * b.detector_columns + iu] = acc / (sub * sv);
            }
    return out;
}

std::vector<double> denseProjector(const CtGeometry& g) {
    const std::size_t n = g.volume.voxels(), rows = g.beam.samples();
    std::vector<double> a(rows * n);
    const DdProjector dd(g);
    ComplexArray e(n), col(rows);
    for (std::size_t v = 0; v < n; ++v) {
        std::fill(e.begin(), e.end(), cdouble(0));
        e[v] = 1;
        dd.forward(e.data(), col.data());
        for (std::size_t r = 0; r < rows; ++r) a[r * n + v] = col[r].real();
    }
    return a;
}

// Solves the symmetric positive definite system m x = b (n x n, row-major) by Cholesky.
std::vector<double> denseSolve(std::vector<double> m, std::vector<double> b, int n) {
    for (int j = 0; j < n; ++j) {
        double d = m[j * n + j];
        for (int k = 0; k < j; ++k) d -= m[j * n + k] * m[j * n + k];
        m[j * n + j] = std::sqrt(d);
        for (int i = j + 1; i < n; ++i) {
            double v = m[i * n + j];
            for (int k = 0; k < j; ++k) v -= m[i * n + k] * m[j * n + k];
            m[i * n + j] = v / m[j * n + j];
        }
    }
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < i; ++k) b[i] -= m[i * n + k] * b[k];
        b[i] /= m[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
        for (int k = i + 1; k < n; ++k) b[i] -= m[k * n + i] * b[k];
        b[i] /= m[i * n + i];
    }
    return b;
}

double relativeError(const std::vector<double>& a, const std::vector<double>& ref) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        num += (a[i] - ref[i]) * (a[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return std::sqrt(num / den);
}

ComplexArray toComplex(const std::vector<double>& v) { return ComplexArray(v.begin(), v.end()); }

std::vector<double> realPart(const ComplexArray& v) {
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) r[i] = v[i].real();
    return r;
}

}  // namespace recon::ct::test
