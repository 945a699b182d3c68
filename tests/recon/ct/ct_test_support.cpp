#include "ct_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "recon/ct/phantom.hpp"

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
    const double norm = std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
    double t0 = -std::numeric_limits<double>::infinity(), t1 = std::numeric_limits<double>::infinity();
    for (int a = 0; a < dims; ++a) {
        const double d = direction[a] / norm;
        if (std::abs(d) < 1e-15) {
            if (point[a] < lo[a] || point[a] > hi[a]) return 0;
            continue;
        }
        double ta = (lo[a] - point[a]) / d, tb = (hi[a] - point[a]) / d;
        if (ta > tb) std::swap(ta, tb);
        t0 = std::max(t0, ta);
        t1 = std::min(t1, tb);
    }
    return t1 > t0 ? attenuation * (t1 - t0) : 0.0;
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
