// Internal: the per-format readers and writers behind dataset_io.hpp, and the
// few rules every reader shares (limits, grids, units). Only the parts this
// build has are compiled (RECONSTUDIO_IO_HAVE_<PART>).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "recon/core/dataset.hpp"
#include "recon/io/dataset_io.hpp"

namespace recon::io {

// Sizes beyond these are refused before anything is allocated.
inline constexpr std::uint64_t kMaxSamples = std::uint64_t(1) << 31;  // samples x coils
inline constexpr int kMaxCoils = 1024;
inline constexpr int kMaxAxis = 4096;

// The ReconStudio HDF5 layout's version (docs/FILE_FORMAT.md). Readers accept
// every version up to this one.
inline constexpr int kLayoutVersion = 1;
inline constexpr const char* kLayoutName = "ReconStudio";

// A grid from a declared matrix (n_z = 1: 2D) and FOV; throws InputError with `origin`.
Grid gridFromMatrix(const std::array<long, 3>& n, const std::array<double, 3>& fov_mm, const std::string& origin);
// Converts every active component to cycles per FOV.
void convertToCyclesPerFov(Trajectory& t, const Grid& g, TrajectoryUnits units);
// " (units: cycles per FOV, assumed|as declared|as given by the user)"
std::string unitsNote(TrajectoryUnits units, const char* how);

// BART .cfl/.hdr: a data set from separate arrays; images via bart_cfl.hpp.
std::shared_ptr<Dataset> readBartDataset(const InputSpec& spec);
void writeBartDataset(const std::string& path, const Dataset& data);

#ifdef RECONSTUDIO_IO_HAVE_HDF5
// The HDF5 readers (classifyHdf5, readReconStudio*, readIsmrmrd) take no lock and do not
// validate: they run in the child process of isolated_read.hpp, forked under the HDF5
// lock, and the parent validates. The writers take h5::Hdf5Session themselves.
enum class Hdf5Flavour { ReconStudio, Ismrmrd };
// Opens the file, checks it is HDF5 and says which layout it holds (InputError otherwise).
Hdf5Flavour classifyHdf5(const std::string& path);
Dataset readReconStudioHdf5(const std::string& path, const InputSpec& spec);
void writeReconStudioHdf5(const std::string& path, const Dataset& data);
void writeReconStudioImage(const std::string& path, const Grid& grid, const ComplexArray& image,
                           const std::string& description);
ComplexArray readReconStudioImage(const std::string& path, Grid* grid);
void writeReconStudioResults(const std::string& path, const ReconstructionRecord& rec);
#endif

#ifdef RECONSTUDIO_IO_HAVE_HDF5
struct FramesRead;  // isolated_read.hpp
// An HDF5 input's frames (frames.cpp): read in the child, transformed and validated here.
Frames readHdf5FramesChecked(const InputSpec& spec);
#endif

#ifdef RECONSTUDIO_IO_HAVE_ISMRMRD
// Every frame of the file (isolated_read.hpp's FramesRead), in the child.
FramesRead readIsmrmrd(const std::string& path, const InputSpec& spec);
void writeIsmrmrdImage(const std::string& path, const Grid& grid, const ComplexArray& image,
                       const std::string& description);
#endif

#ifdef RECONSTUDIO_IO_HAVE_NIFTI
void writeNifti(const std::string& path, const Grid& grid, const ComplexArray& image, const ImageWriteOptions& opts);
ComplexArray readNifti(const std::string& path, Grid* grid);
#endif

#ifdef RECONSTUDIO_IO_HAVE_PNG
void writePng(const std::string& path, const Grid& grid, const ComplexArray& image, const ImageWriteOptions& opts);
#endif

}  // namespace recon::io
