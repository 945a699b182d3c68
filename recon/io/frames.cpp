// Files of several problems (dataset_io.hpp's Frame): what the HDF5 readers returned from
// their child process becomes one validated Dataset per frame here, in the parent, where the
// stack-of-stars partitions are transformed along k_z and a trajectory given with --trajectory
// is applied (docs/FILE_FORMAT.md, "Frames").
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "recon/core/errors.hpp"
#include "recon/io/bart_cfl.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/io/formats.hpp"
#include "recon/nufft/fft.hpp"
#ifdef RECONSTUDIO_IO_HAVE_HDF5
#include "recon/io/isolated_read.hpp"
#endif

namespace recon {

std::string FrameCounts::describe() const {
    std::string s;
    auto add = [&](int n, const char* many) {
        if (n > 1) s += (s.empty() ? "" : " x ") + std::to_string(n) + " " + many;
    };
    add(slices, "slices");
    add(partitions, "partitions");
    add(contrasts, "contrasts");
    add(repetitions, "repetitions");
    return s.empty() ? "1 frame" : s;
}

namespace io {
#ifdef RECONSTUDIO_IO_HAVE_HDF5
namespace {

// The k-space positions of a file that stores none, from --trajectory: one frame's readouts.
void supplyTrajectory(FramesRead& raw, const InputSpec& spec) {
    const bool missing = std::any_of(raw.frames.begin(), raw.frames.end(), [](const Dataset& d) { return d.trajectory.k.empty(); });
    if (spec.trajectory.empty()) return;
    if (!missing)
        throw InputError("input '" + spec.input + "' stores its own trajectory: --trajectory is for files that store none");
    const std::string name = cflBase(spec.trajectory);
    const CflArray t = readCfl(name, "trajectory");
    if (t.dim(0) != 3)
        throw InputError("trajectory '" + name + "' (" + t.describe() +
                         "): its first dimension must be 3 (k_x, k_y, k_z), as `bart traj` writes");
    const std::size_t M = t.elements() / 3;
    for (std::size_t i = 0; i < t.elements(); ++i)
        if (!std::isfinite(t.data[i].real()) || t.data[i].imag() != 0)
            throw InputError("trajectory '" + name + "': value " + std::to_string(i) + " is not a finite real number");
    for (std::size_t f = 0; f < raw.frames.size(); ++f) {
        Dataset& d = raw.frames[f];
        const std::size_t samples = d.kspace.size() / std::size_t(std::max(1, d.coils));
        if (samples != M)
            throw InputError("trajectory '" + name + "' (" + t.describe() + ") has " + std::to_string(M) +
                             " samples, frame " + std::to_string(f) + " of input '" + spec.input + "' has " +
                             std::to_string(samples) + " (--trajectory covers one frame's readouts)");
        d.trajectory.k.resize(3 * M);
        for (std::size_t i = 0; i < 3 * M; ++i) d.trajectory.k[i] = t.data[i].real();
        if (raw.shared.grid.dims == 2)
            for (std::size_t m = 0; m < M; ++m) d.trajectory.k[3 * m + 2] = 0;  // a 2D problem (or one partition)
        d.trajectory.readout_length = int(t.dim(1));
    }
    raw.shared.source += "; trajectory from '" + name + "' (" + t.describe() + ", cycles per FOV)";
}

// Stack of stars: for each slice, contrast and repetition, the partitions p (k_z = p - c) become
// the images' z positions n (z = (n - N/2)/N) by the inverse DFT with 1/N, so each partition is
// the 2D problem of its slice of the 3D image: d_n(k_xy) = sum_xy rho(x, y, z_n) e^{-i 2 pi k.x}.
// With the box basis, the partition axis's phi_z = sinc(k_z / N) is divided out first.
void transformPartitions(FramesRead& raw, BasisFunction basis, const std::string& origin) {
    const int P = raw.partitions, centre = raw.partition_centre, half = P / 2;
    const std::size_t np = std::size_t(P);
    std::map<std::array<int, 3>, std::vector<int>> groups;  // (slice, contrast, repetition) -> frame per partition
    for (std::size_t f = 0; f < raw.frames.size(); ++f) {
        const FrameIndex& i = raw.index[f];
        auto& g = groups[{i.slice, i.contrast, i.repetition}];
        g.resize(np, -1);
        g[std::size_t(i.partition)] = int(f);
    }
    std::vector<cdouble> pre(np), post(np);
    for (int p = 0; p < P; ++p) {
        const double phi = basis == BasisFunction::BoxVoxel ? sinc(double(p - centre) / P) : 1.0;
        pre[std::size_t(p)] = std::polar(1.0 / phi, -2 * kPi * double(p) * half / P);
        post[std::size_t(p)] = std::polar(1.0 / P, -2 * kPi * double(centre) * (p - half) / P);
    }
    FftPlan<double> plan({P, 1, 1}, 1, FftDirection::Backward);
    std::vector<cdouble> line(np);
    FramesRead out;
    out.shared = std::move(raw.shared);
    for (auto& [key, members] : groups) {
        const std::string which = "slice " + std::to_string(key[0]) + ", contrast " + std::to_string(key[1]) +
                                  ", repetition " + std::to_string(key[2]);
        for (int p = 0; p < P; ++p)
            if (members[std::size_t(p)] < 0)
                throw InputError(origin + ": " + which + " has no acquisitions of partition " + std::to_string(p) +
                                 " of " + std::to_string(P) +
                                 ": a stack of stars needs every partition (partial Fourier along k_z is not supported)");
        const Dataset& first = raw.frames[std::size_t(members[0])];
        const std::size_t M = first.trajectory.samples();
        for (int p = 1; p < P; ++p) {
            const Dataset& d = raw.frames[std::size_t(members[std::size_t(p)])];
            if (d.trajectory.samples() != M)
                throw InputError(origin + ": " + which + ", partition " + std::to_string(p) + " has " +
                                 std::to_string(d.trajectory.samples()) + " samples, partition 0 has " +
                                 std::to_string(M) + ": a stack of stars needs the same readouts in every partition");
            for (std::size_t i = 0; i < 3 * M; ++i)
                if (std::abs(d.trajectory.k[i] - first.trajectory.k[i]) > 1e-5 * std::max(1.0, std::abs(first.trajectory.k[i])))
                    throw InputError(origin + ": " + which + ", partition " + std::to_string(p) + ": sample " +
                                     std::to_string(i / 3) + " lies at another k than in partition 0: a stack of stars "
                                     "needs the same spokes, in the same order, in every partition");
        }
        std::vector<Dataset> slices(np);
        for (int n = 0; n < P; ++n) {
            Dataset& s = slices[std::size_t(n)];
            s.coils = first.coils;
            s.trajectory = first.trajectory;
            s.density = first.density;
            s.kspace.resize(first.kspace.size());
        }
        for (std::size_t v = 0; v < first.kspace.size(); ++v) {  // coil x sample
            for (int p = 0; p < P; ++p)
                line[std::size_t(p)] = raw.frames[std::size_t(members[std::size_t(p)])].kspace[v] * pre[std::size_t(p)];
            plan.execute(line.data());
            for (int n = 0; n < P; ++n) slices[std::size_t(n)].kspace[v] = line[std::size_t(n)] * post[std::size_t(n)];
        }
        for (int n = 0; n < P; ++n) {
            out.index.push_back({key[0], n, key[1], key[2]});
            out.frames.push_back(std::move(slices[std::size_t(n)]));
        }
    }
    out.partitions = P;
    out.partition_centre = centre;
    raw = std::move(out);
}

FrameCounts countsOf(const std::vector<FrameIndex>& index) {
    std::set<int> s, p, c, r;
    for (const FrameIndex& i : index) {
        s.insert(i.slice);
        p.insert(i.partition);
        c.insert(i.contrast);
        r.insert(i.repetition);
    }
    return {int(s.size()), int(p.size()), int(c.size()), int(r.size())};
}

std::string frameName(const FrameIndex& i, const FrameCounts& n) {
    std::string s;
    auto add = [&](int count, const char* what, int value) {
        if (count > 1) s += (s.empty() ? "" : ", ") + std::string(what) + " " + std::to_string(value);
    };
    add(n.slices, "slice", i.slice);
    add(n.partitions, "partition", i.partition);
    add(n.contrasts, "contrast", i.contrast);
    add(n.repetitions, "repetition", i.repetition);
    return s.empty() ? "frame 0" : s;
}

FramesRead readHdf5Frames(const InputSpec& spec) {
    if (classifyHdf5(spec.input) == Hdf5Flavour::ReconStudio) {
        FramesRead raw;
        raw.shared = readReconStudioHdf5(spec.input, spec);
        Dataset own;
        own.coils = raw.shared.coils;
        own.trajectory = std::move(raw.shared.trajectory);
        own.kspace = std::move(raw.shared.kspace);
        own.density = std::move(raw.shared.density);
        raw.frames.push_back(std::move(own));
        raw.index.push_back({});
        return raw;
    }
#ifdef RECONSTUDIO_IO_HAVE_ISMRMRD
    return readIsmrmrd(spec.input, spec);
#else
    throw InputError("input '" + spec.input + "' is ISMRMRD, but this build has no ISMRMRD support");
#endif
}
}  // namespace

Frames readHdf5FramesChecked(const InputSpec& spec) {
    // libhdf5 may crash on a damaged file: it is read in a child process (isolated_read.hpp);
    // the transforms and validation run here, where OpenMP may be used.
    FramesRead raw = readFramesIsolated(spec.input, [&] { return readHdf5Frames(spec); });
    const std::string origin = "input '" + spec.input + "'";
    if (raw.frames.empty()) throw InputError(origin + ": no frames");
    supplyTrajectory(raw, spec);
    std::string basis_note;
    if (spec.basis && raw.shared.basis != *spec.basis) {
        raw.shared.basis = *spec.basis;
        basis_note = "; voxel basis " + toString(*spec.basis) + " (as given by the user)";
    }
    if (raw.partitions > 1) transformPartitions(raw, raw.shared.basis, origin);
    Frames out;
    out.counts = countsOf(raw.index);
    const int total = int(raw.frames.size());
    out.total = total;
    if (spec.frame && (*spec.frame < 0 || *spec.frame >= total))
        throw InputError(origin + ": has " + std::to_string(total) + " frame(s) (" + out.counts.describe() +
                         "); --frame " + std::to_string(*spec.frame) + " is not among 0 to " + std::to_string(total - 1));
    for (int f = 0; f < total; ++f) {
        if (spec.frame && f != *spec.frame) continue;
        auto d = std::make_shared<Dataset>(raw.shared);
        Dataset& own = raw.frames[std::size_t(f)];
        d->coils = own.coils;
        d->trajectory = std::move(own.trajectory);
        d->kspace = std::move(own.kspace);
        d->density = std::move(own.density);
        const std::string name = frameName(raw.index[std::size_t(f)], out.counts);
        if (total > 1) {
            d->name += " [" + name + "]";
            d->source += "; frame " + std::to_string(f) + " of " + std::to_string(total) + " (" + out.counts.describe() +
                         "): " + name;
        }
        d->source += basis_note;
        d->validate(origin + (total > 1 ? ", " + name : std::string()));
        out.frames.push_back({raw.index[std::size_t(f)], f, name, std::move(d)});
    }
    return out;
}
#endif

}  // namespace io
}  // namespace recon
