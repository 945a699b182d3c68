// NIfTI-1 export through nifti_clib: magnitude (and optionally phase) as
// float32, voxel size = FOV / N in mm, and qform = sform mapping image axis i
// to scanner axis i (NIfTI's RAS+ frame) with the centre voxel (N/2) at the
// origin, matching the engine's x_n = (n - N/2) / N. nifti_clib builds the
// header; the bytes (gzip-compressed for .nii.gz) are written here, because
// nifti_image_write does not report a failed write. Reading (for round trips
// and for reference images) accepts the common real types.
#include <nifti1_io.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>

#include "recon/core/errors.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/formats.hpp"

namespace recon::io {
namespace {
struct NiftiFree {
    void operator()(nifti_image* p) const { nifti_image_free(p); }
};
using NiftiPtr = std::unique_ptr<nifti_image, NiftiFree>;

void quiet() { nifti_set_debug_level(0); }

std::string phasePath(const std::string& path) {
    const std::string ext = extensionOf(path);
    return path.substr(0, path.size() - ext.size()) + "_phase" + ext;
}

// The gzip stream of `bytes` (what gzip(1) and nifti_clib read as .nii.gz).
std::string gzipped(const std::string& bytes, const std::string& target) {
    if (bytes.size() >= std::size_t(UINT32_MAX) / 2)
        throw Error(cannotWrite(target, "too large for one gzip-compressed NIfTI volume; write .nii"));
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error(cannotWrite(target, "zlib cannot start compressing"));
    std::string out(deflateBound(&z, uLong(bytes.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = uInt(bytes.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    const int status = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (status != Z_STREAM_END) throw Error(cannotWrite(target, "zlib compression failed"));
    return out;
}

void writeVolume(AtomicOutput& out, const Grid& grid, const std::vector<float>& values,
                 const std::string& description, bool phase, int volumes) {
    // Several volumes (frames) along the 4th dimension, NIfTI's time axis.
    int dims[8] = {volumes > 1 ? 4 : grid.dims == 2 ? 2 : 3, grid.n[0], grid.n[1], grid.n[2], volumes, 1, 1, 1};
    NiftiPtr nim(nifti_make_new_nim(dims, NIFTI_TYPE_FLOAT32, 0));  // header only
    if (!nim) throw Error("NIfTI: cannot allocate the image header");
    nim->nifti_type = NIFTI_FTYPE_NIFTI1_1;
    float voxel[3];
    for (int a = 0; a < 3; ++a) voxel[a] = float(grid.fov_mm[a] / grid.n[a]);
    nim->dx = nim->pixdim[1] = voxel[0];
    nim->dy = nim->pixdim[2] = voxel[1];
    nim->dz = nim->pixdim[3] = voxel[2];
    if (volumes > 1) nim->dt = nim->pixdim[4] = 1;  // frames, not seconds: no time unit is set
    nim->xyz_units = NIFTI_UNITS_MM;
    nim->qform_code = nim->sform_code = NIFTI_XFORM_SCANNER_ANAT;
    nim->quatern_b = nim->quatern_c = nim->quatern_d = 0;
    nim->qfac = 1;
    nim->qoffset_x = -float(grid.n[0] / 2) * voxel[0];
    nim->qoffset_y = -float(grid.n[1] / 2) * voxel[1];
    nim->qoffset_z = -float(grid.n[2] / 2) * voxel[2];
    nim->qto_xyz = nifti_quatern_to_mat44(0, 0, 0, nim->qoffset_x, nim->qoffset_y, nim->qoffset_z, voxel[0],
                                          voxel[1], voxel[2], 1);
    nim->sto_xyz = nim->qto_xyz;
    nim->cal_min = phase ? float(-kPi) : values.empty() ? 0.0f : std::min(0.0f, *std::min_element(values.begin(), values.end()));
    nim->cal_max = phase ? float(kPi) : (values.empty() ? 0.0f : *std::max_element(values.begin(), values.end()));
    std::strncpy(nim->descrip, description.c_str(), sizeof nim->descrip - 1);
    if (phase) std::strncpy(nim->intent_name, "phase (rad)", sizeof nim->intent_name - 1);
    nim->iname_offset = 352;  // header (348 bytes) and an empty extension flag (4 bytes)
    const nifti_1_header header = nifti_convert_nim2nhdr(nim.get());
    std::string bytes(sizeof header, '\0');
    std::memcpy(bytes.data(), &header, sizeof header);
    bytes.append(4, '\0');
    bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    if (extensionOf(out.target()) == ".nii.gz") bytes = gzipped(bytes, out.target());
    out.write(bytes.data(), bytes.size());
}
}  // namespace

void writeNifti(const std::string& path, const Grid& grid, const ComplexArray& image, const ImageWriteOptions& opts) {
    const int volumes = std::max(1, opts.volumes);
    if (image.size() != grid.voxels() * std::size_t(volumes))
        throw Error("writeImage: " + std::to_string(image.size()) + " voxels for " + std::to_string(volumes) +
                    " volume(s) of grid " + grid.describe());
    std::vector<float> magnitude(image.size()), phase;
    for (std::size_t i = 0; i < image.size(); ++i)
        magnitude[i] = float(opts.real_part ? image[i].real() : std::abs(image[i]));
    const std::string description = opts.description.empty() ? (opts.real_part ? "ReconStudio real part" : "ReconStudio magnitude")
                                                              : opts.description;
    AtomicOutput mag_out(path);
    writeVolume(mag_out, grid, magnitude, description, false, volumes);
    if (!opts.phase) {
        mag_out.commit();
        return;
    }
    phase.resize(image.size());
    for (std::size_t i = 0; i < image.size(); ++i) phase[i] = float(std::arg(image[i]));
    AtomicOutput phase_out(phasePath(path));
    writeVolume(phase_out, grid, phase, description + " (phase)", true, volumes);
    commitAll({&mag_out, &phase_out});
}

ComplexArray readNifti(const std::string& path, Grid* grid_out) {
    const std::uint64_t size = regularFileSize(path, "NIfTI image");
    if (size < 348) throw InputError("NIfTI image '" + path + "': " + std::to_string(size) + " bytes is too short");
    quiet();
    // The header alone first: its sizes are checked before any data is read.
    int swapped = 0;
    nifti_1_header* hdr = nifti_read_header(path.c_str(), &swapped, 1);
    if (!hdr) throw InputError("NIfTI image '" + path + "': not a valid NIfTI-1 header");
    const nifti_1_header h = *hdr;
    std::free(hdr);
    if (h.dim[0] < 2 || h.dim[0] > 7)
        throw InputError("NIfTI image '" + path + "': " + std::to_string(h.dim[0]) + " dimensions");
    std::array<long, 3> n{1, 1, 1};
    for (int a = 1; a <= h.dim[0]; ++a) {
        if (h.dim[a] < 1) throw InputError("NIfTI image '" + path + "': dimension " + std::to_string(a) + " is empty");
        if (a <= 3) n[std::size_t(a - 1)] = h.dim[a];
        else if (h.dim[a] != 1)
            throw InputError("NIfTI image '" + path + "': has " + std::to_string(h.dim[a]) +
                             " volumes along dimension " + std::to_string(a) + "; expected one image");
    }
    std::array<double, 3> fov{};
    for (int a = 0; a < 3; ++a) {
        const double d = std::abs(double(h.pixdim[a + 1]));
        double mm = d;
        if (XYZT_TO_SPACE(h.xyzt_units) == NIFTI_UNITS_METER) mm = d * 1000;
        if (XYZT_TO_SPACE(h.xyzt_units) == NIFTI_UNITS_MICRON) mm = d / 1000;
        fov[std::size_t(a)] = std::isfinite(mm) && mm > 0 && mm < 1e4 ? mm * double(n[std::size_t(a)]) : 240.0;
    }
    const Grid grid = gridFromMatrix(n, fov, "NIfTI image '" + path + "'");
    int bytes_per_voxel = 0;
    switch (h.datatype) {
        case NIFTI_TYPE_UINT8: bytes_per_voxel = 1; break;
        case NIFTI_TYPE_INT16: case NIFTI_TYPE_UINT16: bytes_per_voxel = 2; break;
        case NIFTI_TYPE_INT32: case NIFTI_TYPE_FLOAT32: bytes_per_voxel = 4; break;
        case NIFTI_TYPE_FLOAT64: case NIFTI_TYPE_COMPLEX64: bytes_per_voxel = 8; break;
        default:
            throw InputError("NIfTI image '" + path + "': data type " + std::to_string(h.datatype) +
                             " is not supported (uint8, int16, uint16, int32, float32, float64, complex64)");
    }
    // nifti_clib accepts short data files silently: check the size where it is known.
    const std::uint64_t data_bytes = std::uint64_t(grid.voxels()) * std::uint64_t(bytes_per_voxel);
    if (extensionOf(path) == ".nii" && (!(h.vox_offset >= 348) || double(size) < double(h.vox_offset) + double(data_bytes)))
        throw InputError("NIfTI image '" + path + "': " + std::to_string(size) + " bytes, but its header declares " +
                         std::to_string(data_bytes) + " bytes of data from offset " +
                         formatNumber(h.vox_offset) + " (truncated file)");
    NiftiPtr nim(nifti_image_read(path.c_str(), 1));
    if (!nim || !nim->data) throw InputError("NIfTI image '" + path + "': data unreadable (truncated file?)");
    if (nim->nvox != grid.voxels() || nim->datatype != h.datatype)
        throw InputError("NIfTI image '" + path + "': header and data disagree");
    // scl_slope/scl_inter give the stored values' physical meaning (0 slope: none).
    const double slope = nim->scl_slope != 0 && std::isfinite(nim->scl_slope) ? nim->scl_slope : 1.0;
    const double inter = std::isfinite(nim->scl_inter) ? nim->scl_inter : 0.0;
    ComplexArray out(grid.voxels());
    const void* p = nim->data;
    for (std::size_t i = 0; i < out.size(); ++i) {
        double re = 0, im = 0;
        switch (nim->datatype) {
            case NIFTI_TYPE_UINT8: re = static_cast<const std::uint8_t*>(p)[i]; break;
            case NIFTI_TYPE_INT16: re = static_cast<const std::int16_t*>(p)[i]; break;
            case NIFTI_TYPE_UINT16: re = static_cast<const std::uint16_t*>(p)[i]; break;
            case NIFTI_TYPE_INT32: re = static_cast<const std::int32_t*>(p)[i]; break;
            case NIFTI_TYPE_FLOAT32: re = static_cast<const float*>(p)[i]; break;
            case NIFTI_TYPE_FLOAT64: re = static_cast<const double*>(p)[i]; break;
            case NIFTI_TYPE_COMPLEX64:
                re = static_cast<const float*>(p)[2 * i];
                im = static_cast<const float*>(p)[2 * i + 1];
                break;
        }
        out[i] = cdouble(re * slope + inter, im * slope);
        if (!std::isfinite(out[i].real()) || !std::isfinite(out[i].imag()))
            throw InputError("NIfTI image '" + path + "': voxel " + std::to_string(i) + " is NaN or Inf");
    }
    if (grid_out) *grid_out = grid;
    return out;
}

}  // namespace recon::io
