#include "recon/ct/dd_projector.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

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

// DD's sweep: two sorted lists of boundaries (a row of voxels' shadows and the detector's cell
// edges), walked together; each step visits the overlap of the current voxel and cell and
// advances whichever ends first. O(voxels + cells) per row, no search.
template <class Visit>
void sweepOverlaps(const double* voxel_edges, int voxels, double cell_edge0, double pitch, int cells, Visit&& visit) {
    int m = 0, k = 0;
    // Skip the voxels wholly before the detector and the cells wholly before the voxels.
    while (m < voxels && voxel_edges[m + 1] <= cell_edge0) ++m;
    if (m == voxels) return;
    if (voxel_edges[m] > cell_edge0) k = std::max(0, cellOf(voxel_edges[m], cell_edge0, pitch, cells));
    while (m < voxels && k < cells) {
        const double cell_lo = cell_edge0 + k * pitch, cell_hi = cell_lo + pitch;
        const double overlap = std::min(voxel_edges[m + 1], cell_hi) - std::max(voxel_edges[m], cell_lo);
        if (overlap > 0) visit(m, k, overlap / pitch);
        if (voxel_edges[m + 1] < cell_hi)
            ++m;
        else
            ++k;
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

    // The columns' boundaries across the rays, on the slice's mid-plane, projected to u. Along
    // the slice u is monotonic (the plane does not reach the source); sorted increasing, with
    // `order` mapping a sorted position back to the column.
    thread_local std::vector<double> u_edges, z_edges, v_edges;
    u_edges.resize(columns + 1);
    const double fixed = vol.centre(x_dominant ? 0 : 1, slice);
    for (int m = 0; m <= columns; ++m) {
        const double t = vol.centre(column_axis, 0) + (m - 0.5) * vol.voxel_mm[column_axis];
        const double x = x_dominant ? fixed : t, y = x_dominant ? t : fixed;
        u_edges[m] = dsd * (-x * s + y * c) / (dso - (x * c + y * s));
    }
    const bool reversed = u_edges[columns] < u_edges[0];
    if (reversed) std::reverse(u_edges.begin(), u_edges.end());
    if (!planar_) {
        z_edges.resize(nz + 1);
        for (int k = 0; k <= nz; ++k) z_edges[k] = vol.centre(2, 0) + (k - 0.5) * vol.voxel_mm[2];
        v_edges.resize(nz + 1);
    }

    int current = -1;  // the column whose v overlaps are listed
    struct Overlap {
        int k, iv;
        double w;
    };
    thread_local std::vector<Overlap> v_overlaps;
    sweepOverlaps(u_edges.data(), columns, u_edge0, pu, nu, [&](int m, int iu, double wu) {
        const int col = reversed ? columns - 1 - m : m;
        const int i = x_dominant ? slice : col, j = x_dominant ? col : slice;
        if (planar_) {
            const std::size_t pixel = iu;
            visit(std::size_t(j) * nx + i, view_offset + pixel, wu * path[pixel]);
            return;
        }
        if (col != current) {
            // The column's z boundaries projected to v from its centre (the separable form).
            current = col;
            const double magnification = dsd / (dso - (vol.centre(0, i) * c + vol.centre(1, j) * s));
            for (int k = 0; k <= nz; ++k) v_edges[k] = z_edges[k] * magnification;
            v_overlaps.clear();
            sweepOverlaps(v_edges.data(), nz, v_edge0, pv, nv,
                          [&](int k, int iv, double wv) { v_overlaps.push_back({k, iv, wv}); });
        }
        for (const Overlap& o : v_overlaps) {
            const std::size_t pixel = std::size_t(o.iv) * nu + iu;
            visit((std::size_t(o.k) * ny + j) * nx + i, view_offset + pixel, wu * o.w * path[pixel]);
        }
    });
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
    // The views whose rays run along x cut the volume into x-slices, the others into
    // y-slices. Within each group a thread owns a fixed range of slices for every view, so
    // no two threads touch one voxel and the threads meet once, between the groups (a
    // barrier per view costs a scheduler time slice each on a loaded machine). Every voxel
    // sums its views in one order whatever the thread count.
    std::vector<std::size_t> groups[2];
    for (std::size_t view = 0; view < beam.views(); ++view) groups[xDominant(view) ? 0 : 1].push_back(view);
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> path;
        const int thread = omp_get_thread_num(), team = omp_get_num_threads();
        for (int g = 0; g < 2; ++g) {
            const int n = geometry_.volume.size[g];
            const int first = int(std::int64_t(n) * thread / team), last = int(std::int64_t(n) * (thread + 1) / team);
            if (first < last)
                for (std::size_t view : groups[g]) {
                    pathFactors(view, path);
                    for (int slice = first; slice < last; ++slice)
                        visitSlice(view, slice, path, [&](std::size_t voxel, std::size_t pixel, double w) {
                            volume[voxel] += w * projections[pixel];
                        });
                }
#pragma omp barrier
        }
    }
}

double DdProjector::weightedTrace(const std::vector<double>& pixel_weights) const {
    const ConeBeamGeometry& beam = geometry_.beam;
    if (!pixel_weights.empty() && pixel_weights.size() != beam.samples())
        throw InputError("DD projector: " + std::to_string(pixel_weights.size()) + " pixel weights for " +
                         std::to_string(beam.samples()) + " detector samples");
    const long long views = static_cast<long long>(beam.views());
    // One partial sum per view, added in view order: the same s whatever the thread count.
    std::vector<double> per_view(beam.views(), 0.0);
#pragma omp parallel num_threads(threads())
    {
        std::vector<double> path;
#pragma omp for schedule(dynamic, 1)
        for (long long view = 0; view < views; ++view) {
            pathFactors(view, path);
            double sum = 0;
            for (int slice = 0, n = slices(view); slice < n; ++slice)
                visitSlice(view, slice, path, [&](std::size_t, std::size_t pixel, double w) {
                    sum += (pixel_weights.empty() ? 1.0 : pixel_weights[pixel]) * w * w;
                });
            per_view[view] = sum;
        }
    }
    double trace = 0;
    for (double v : per_view) trace += v;
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
