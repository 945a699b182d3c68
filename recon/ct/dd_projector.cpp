#include "recon/ct/dd_projector.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "recon/core/errors.hpp"
#include "recon/ct/projector.hpp"

namespace recon::ct {
namespace {

// The index of the cell of width `pitch` (first edge at `edge0`) holding `t`, clamped to
// [-1, n] before the conversion: a boundary far off the detector cannot overflow an int.
int cellOf(double t, double edge0, double pitch, int n) {
    return int(std::clamp(std::floor((t - edge0) / pitch), -1.0, double(n)));
}

}  // namespace

DdProjector::DdProjector(const CtGeometry& geometry, int threads)
    : geometry_(geometry), threads_(threads),
      planar_(geometry.beam.fanBeam() && geometry.volume.size[2] == 1) {
    validate(geometry_);
    if (threads < 0) throw InputError("DD projector: threads must be >= 0 (0 = all cores), got " + std::to_string(threads));
}

int DdProjector::threads() const { return threads_ > 0 ? threads_ : omp_get_max_threads(); }

bool DdProjector::xDominant(std::size_t view) const {
    const double b = geometry_.beam.angles_rad[view];
    return std::abs(std::cos(b)) >= std::abs(std::sin(b));
}

int DdProjector::slices(std::size_t view) const { return geometry_.volume.size[xDominant(view) ? 0 : 1]; }

// The length of the ray through each pixel's centre across one slice: the slice's
// thickness over the cosine between the ray and the dominant axis.
void DdProjector::pathFactors(std::size_t view, std::vector<double>& path) const {
    const ConeBeamGeometry& beam = geometry_.beam;
    const double c = std::cos(beam.angles_rad[view]), s = std::sin(beam.angles_rad[view]);
    const double dsd = beam.source_to_detector_mm;
    const bool x_dominant = xDominant(view);
    const double thickness = geometry_.volume.voxel_mm[x_dominant ? 0 : 1];
    const int nu = beam.detector_columns, nv = beam.detector_rows;
    path.resize(std::size_t(nu) * nv);
    for (int iv = 0; iv < nv; ++iv)
        for (int iu = 0; iu < nu; ++iu) {
            const double u = beam.pixelU(iu), v = planar_ ? 0.0 : beam.pixelV(iv);
            const double dx = -dsd * c - u * s, dy = -dsd * s + u * c;
            const double along = std::abs(x_dominant ? dx : dy);
            path[std::size_t(iv) * nu + iu] = thickness * std::sqrt(dx * dx + dy * dy + v * v) / along;
        }
}

template <class Visit>
void DdProjector::visitSlice(std::size_t view, int slice, const std::vector<double>& path, Visit&& visit) const {
    const ConeBeamGeometry& beam = geometry_.beam;
    const VolumeGeometry& vol = geometry_.volume;
    const double c = std::cos(beam.angles_rad[view]), s = std::sin(beam.angles_rad[view]);
    const double dso = beam.source_to_isocentre_mm, dsd = beam.source_to_detector_mm;
    const bool x_dominant = xDominant(view);
    const int nx = vol.size[0], ny = vol.size[1], nz = vol.size[2];
    const int nu = beam.detector_columns, nv = beam.detector_rows;
    const double pu = beam.pixel_u_mm, pv = beam.pixel_v_mm;
    const double u_edge0 = beam.pixelU(0) - 0.5 * pu, v_edge0 = beam.pixelV(0) - 0.5 * pv;
    const std::size_t view_offset = view * std::size_t(nu) * nv;
    const int columns = x_dominant ? ny : nx;
    const int column_axis = x_dominant ? 1 : 0;
    const double half = 0.5 * vol.voxel_mm[column_axis];

    // The v overlaps of one voxel column: (voxel z, row, fraction of the row).
    struct Overlap {
        int k, iv;
        double w;
    };
    std::vector<Overlap> v_overlaps;
    v_overlaps.reserve(std::size_t(nz) * 3);

    for (int col = 0; col < columns; ++col) {
        const int i = x_dominant ? slice : col, j = x_dominant ? col : slice;
        const double x = vol.centre(0, i), y = vol.centre(1, j);
        // The column's boundaries across the rays, on the slice's mid-plane, projected to u.
        double bx[2] = {x, x}, by[2] = {y, y};
        (x_dominant ? by : bx)[0] -= half;
        (x_dominant ? by : bx)[1] += half;
        double u_b[2];
        for (int e = 0; e < 2; ++e) u_b[e] = dsd * (-bx[e] * s + by[e] * c) / (dso - (bx[e] * c + by[e] * s));
        const double u_lo = std::min(u_b[0], u_b[1]), u_hi = std::max(u_b[0], u_b[1]);
        const int iu_first = std::max(0, cellOf(u_lo, u_edge0, pu, nu));
        const int iu_last = std::min(nu - 1, cellOf(u_hi, u_edge0, pu, nu));
        if (iu_first > iu_last) continue;

        v_overlaps.clear();
        if (planar_) {
            v_overlaps.push_back({0, 0, 1.0});
        } else {
            const double magnification = dsd / (dso - (x * c + y * s));
            for (int k = 0; k < nz; ++k) {
                const double v_lo = (vol.centre(2, k) - 0.5 * vol.voxel_mm[2]) * magnification;
                const double v_hi = (vol.centre(2, k) + 0.5 * vol.voxel_mm[2]) * magnification;
                const int first = std::max(0, cellOf(v_lo, v_edge0, pv, nv));
                const int last = std::min(nv - 1, cellOf(v_hi, v_edge0, pv, nv));
                for (int iv = first; iv <= last; ++iv) {
                    const double e0 = v_edge0 + iv * pv;
                    const double overlap = std::min(v_hi, e0 + pv) - std::max(v_lo, e0);
                    if (overlap > 0) v_overlaps.push_back({k, iv, overlap / pv});
                }
            }
        }
        for (int iu = iu_first; iu <= iu_last; ++iu) {
            const double e0 = u_edge0 + iu * pu;
            const double overlap = std::min(u_hi, e0 + pu) - std::max(u_lo, e0);
            if (overlap <= 0) continue;
            const double wu = overlap / pu;
            for (const Overlap& o : v_overlaps) {
                const std::size_t pixel = std::size_t(o.iv) * nu + iu;
                visit((std::size_t(o.k) * ny + j) * nx + i, view_offset + pixel, wu * o.w * path[pixel]);
            }
        }
    }
}

void DdProjector::forward(const cdouble* volume, cdouble* projections) const {
    const ConeBeamGeometry& beam = geometry_.beam;
    const std::size_t per_view = std::size_t(beam.detector_columns) * beam.detector_rows;
    const long long views = static_cast<long long>(beam.views());
    // Views are independent in the forward direction: each thread owns whole views.
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> path;
#pragma omp for schedule(dynamic, 1)
        for (long long view = 0; view < views; ++view) {
            std::fill(projections + view * per_view, projections + (view + 1) * per_view, cdouble(0));
            pathFactors(view, path);
            for (int slice = 0, n = slices(view); slice < n; ++slice)
                visitSlice(view, slice, path, [&](std::size_t voxel, std::size_t pixel, double w) {
                    projections[pixel] += w * volume[voxel];
                });
        }
    }
}

void DdProjector::adjoint(const cdouble* projections, cdouble* volume) const {
    const ConeBeamGeometry& beam = geometry_.beam;
    std::fill(volume, volume + geometry_.volume.voxels(), cdouble(0));
    // Within one view the slices own disjoint voxels: threads split the slices, and
    // every voxel sums its views in the same order whatever the thread count.
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> path;
        for (std::size_t view = 0; view < beam.views(); ++view) {
            pathFactors(view, path);
            const int n = slices(view);
#pragma omp for schedule(static)
            for (int slice = 0; slice < n; ++slice)
                visitSlice(view, slice, path, [&](std::size_t voxel, std::size_t pixel, double w) {
                    volume[voxel] += w * projections[pixel];
                });
        }
    }
}

double DdProjector::weightedTrace(const std::vector<double>& pixel_weights) const {
    const ConeBeamGeometry& beam = geometry_.beam;
    if (!pixel_weights.empty() && pixel_weights.size() != beam.samples())
        throw InputError("DD projector: " + std::to_string(pixel_weights.size()) + " pixel weights for " +
                         std::to_string(beam.samples()) + " detector samples");
    const long long views = static_cast<long long>(beam.views());
    double trace = 0;
#pragma omp parallel num_threads(threads()) reduction(+ : trace)
    {
        std::vector<double> path;
#pragma omp for schedule(dynamic, 1)
        for (long long view = 0; view < views; ++view) {
            pathFactors(view, path);
            for (int slice = 0, n = slices(view); slice < n; ++slice)
                visitSlice(view, slice, path, [&](std::size_t, std::size_t pixel, double w) {
                    trace += (pixel_weights.empty() ? 1.0 : pixel_weights[pixel]) * w * w;
                });
        }
    }
    return trace;
}

namespace {

// The DD projector on any VectorSpace: vectors cross to the host and back.
class CpuDdOperator final : public LinearOperator {
public:
    CpuDdOperator(VectorSpace& space, const CtGeometry& geometry, int threads)
        : LinearOperator(space, geometry.volume.voxels(), geometry.beam.samples(), "CT distance-driven projector"),
          dd_(geometry, threads) {}

protected:
    void applyForward(const Vector& x, Vector& y) const override {
        space().download(x, in_);
        out_.assign(outSize(), cdouble(0));
        dd_.forward(in_.data(), out_.data());
        space().upload(out_, y);
    }
    void applyAdjoint(const Vector& y, Vector& x) const override {
        space().download(y, in_);
        out_.assign(inSize(), cdouble(0));
        dd_.adjoint(in_.data(), out_.data());
        space().upload(out_, x);
    }

private:
    DdProjector dd_;
    mutable ComplexArray in_, out_;
};

}  // namespace

LinearOperatorPtr cpuDdProjector(VectorSpace& space, const CtGeometry& geometry, const ProjectorOptions& options) {
    if (options.branchless)
        throw InputError("CT projector: the branchless CPU form is not part of this build (recon/ct/dd_branchless_cpu)");
    return std::make_shared<CpuDdOperator>(space, geometry, options.threads);
}

}  // namespace recon::ct
