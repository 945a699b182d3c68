#include "recon/ct/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "recon/core/errors.hpp"

namespace recon::ct {
namespace {

void requirePositive(double value, const char* field) {
    if (!std::isfinite(value) || value <= 0.0)
        throw InputError(std::string("CT geometry: ") + field + " must be a positive finite number, got " +
                         formatNumber(value));
}

void requireFinite(double value, const char* field) {
    if (!std::isfinite(value))
        throw InputError(std::string("CT geometry: ") + field + " is not finite (" + formatNumber(value) + ")");
}

void requireCount(long long value, long long limit, const char* field) {
    if (value < 1 || value > limit)
        throw InputError(std::string("CT geometry: ") + field + " must be 1 … " + std::to_string(limit) + ", got " +
                         std::to_string(value));
}

}  // namespace

void validate(const CtGeometry& geometry) {
    const ConeBeamGeometry& beam = geometry.beam;
    const VolumeGeometry& volume = geometry.volume;
    requirePositive(beam.source_to_isocentre_mm, "source-to-isocentre distance");
    requirePositive(beam.source_to_detector_mm, "source-to-detector distance");
    if (beam.source_to_detector_mm <= beam.source_to_isocentre_mm)
        throw InputError("CT geometry: the detector must lie behind the isocentre, facing the source (source-to-detector " +
                         formatNumber(beam.source_to_detector_mm) + " mm ≤ source-to-isocentre " +
                         formatNumber(beam.source_to_isocentre_mm) + " mm)");
    requireCount(beam.detector_columns, 1 << 14, "detector columns");
    requireCount(beam.detector_rows, 1 << 14, "detector rows");
    requirePositive(beam.pixel_u_mm, "detector pixel width");
    requirePositive(beam.pixel_v_mm, "detector pixel height");
    requireFinite(beam.offset_u_mm, "detector offset u");
    requireFinite(beam.offset_v_mm, "detector offset v");
    requireCount(static_cast<long long>(beam.views()), 1 << 16, "number of views");
    for (std::size_t i = 0; i < beam.angles_rad.size(); ++i)
        if (!std::isfinite(beam.angles_rad[i]))
            throw InputError("CT geometry: angle of view " + std::to_string(i) + " is not finite");
    for (int axis = 0; axis < 3; ++axis) {
        static const char* const size_names[] = {"volume size x", "volume size y", "volume size z"};
        static const char* const voxel_names[] = {"voxel size x", "voxel size y", "voxel size z"};
        static const char* const offset_names[] = {"volume offset x", "volume offset y", "volume offset z"};
        requireCount(volume.size[axis], 1 << 13, size_names[axis]);
        requirePositive(volume.voxel_mm[axis], voxel_names[axis]);
        requireFinite(volume.offset_mm[axis], offset_names[axis]);
    }
    // The source must stay outside the volume's bounding cylinder at every angle.
    double reach = 0.0;
    for (int axis = 0; axis < 2; ++axis) {
        const double half = 0.5 * volume.size[axis] * volume.voxel_mm[axis] + std::abs(volume.offset_mm[axis]);
        reach += half * half;
    }
    reach = std::sqrt(reach);
    if (reach >= beam.source_to_isocentre_mm)
        throw InputError("CT geometry: the volume (radius " + formatNumber(reach) +
                         " mm in the orbit plane) reaches the source's orbit (radius " +
                         formatNumber(beam.source_to_isocentre_mm) + " mm)");
}

std::vector<double> fullScanAngles(int views, double start_rad) {
    if (views < 1) throw InputError("CT geometry: number of views must be at least 1, got " + std::to_string(views));
    std::vector<double> angles(views);
    for (int i = 0; i < views; ++i) angles[i] = start_rad + 2.0 * std::numbers::pi * i / views;
    return angles;
}

double fanHalfAngle(const ConeBeamGeometry& beam) {
    const double edge_low = beam.pixelU(0) - 0.5 * beam.pixel_u_mm;
    const double edge_high = beam.pixelU(beam.detector_columns - 1) + 0.5 * beam.pixel_u_mm;
    return std::max(std::abs(std::atan(edge_low / beam.source_to_detector_mm)),
                    std::abs(std::atan(edge_high / beam.source_to_detector_mm)));
}

std::vector<double> shortScanAngles(const ConeBeamGeometry& beam, int views, double start_rad) {
    if (views < 2) throw InputError("CT geometry: a short scan needs at least 2 views, got " + std::to_string(views));
    const double span = std::numbers::pi + 2.0 * fanHalfAngle(beam);
    std::vector<double> angles(views);
    for (int i = 0; i < views; ++i) angles[i] = start_rad + span * i / (views - 1);
    return angles;
}

}  // namespace recon::ct
