// Reading untrusted HDF5 files in a child process (docs/FILE_FORMAT.md, "Damaged
// HDF5 files").
//
// Debian 12's libhdf5 1.10.8 crashes (SIGSEGV, heap overflows, use-after-free) on
// some damaged files, inside calls no reader can guard from outside. So every HDF5
// input is read in a fork()ed child: the child runs the reader, sends the result
// (or the reader's error) back through a pipe and leaves with _exit; a child that
// dies instead becomes an InputError naming the file. The fork happens under
// h5::Hdf5Session, so no thread of ours is inside libhdf5 in the copy, and the
// child runs readers that take no lock (formats.hpp). The child only reads and
// copies: validation, and anything using OpenMP (libgomp is not fork-safe), is the
// caller's, in the parent. The child's memory and processor time are limited
// (ChildLimits): libhdf5 allocates sizes a damaged file declares, and may loop on
// one. Cost: the data
// cross the pipe once, and while they do, child and parent each hold a copy.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "recon/core/dataset.hpp"
#include "recon/core/types.hpp"
#include "recon/io/dataset_io.hpp"

namespace recon::io {

struct GriddedImage {
    Grid grid;
    ComplexArray image;
};

// A file's problems as its reader returns them from the child: what every frame shares (name,
// source, grid, noise scan, basis: `shared`, without samples) and each frame's own trajectory,
// k-space and density weights (`frames`, the other fields unset). A stack-of-stars file's frames
// are its partitions still in k_z (partitions > 1): the parent transforms them (dataset_io.cpp).
// A frame read without a stored trajectory has none (--trajectory supplies it in the parent).
struct FramesRead {
    Dataset shared;
    std::vector<FrameIndex> index;
    std::vector<Dataset> frames;
    int partitions = 1;        // stack-of-stars: the partition axis's length
    int partition_centre = 0;  // the partition counter at k_z = 0
};

// Runs `read` in a child process and returns what it returned. If `read` throws
// InputError or another recon::Error, the same class (InputError or Error) is thrown
// here with the same message; std::bad_alloc (the child's memory budget spent)
// becomes InputError. If the child dies (a signal, a sanitizer's report) or ends
// without a complete result, throws InputError "input '<path>': the HDF5 library
// crashed while reading it (SIGSEGV): ..." ("image '<path>'" for readImageIsolated).
// `read` must not take the HDF5 lock nor use OpenMP. The tests call these directly.
//
// What the child may use. By default: memory 1 GiB plus 64 times the file's size;
// processor time 60 s plus 1 s per 16 MB of file (a read that spins longer is a
// libhdf5 loop on a damaged file; waiting on a slow disk does not count).
struct ChildLimits {
    std::uint64_t memory_bytes = 0;
    double cpu_seconds = 0;
};
ChildLimits childLimitsFor(std::uint64_t file_bytes);
Dataset readDatasetIsolated(const std::string& path, const std::function<Dataset()>& read,
                            std::optional<ChildLimits> limits = std::nullopt);
FramesRead readFramesIsolated(const std::string& path, const std::function<FramesRead()>& read,
                              std::optional<ChildLimits> limits = std::nullopt);
GriddedImage readImageIsolated(const std::string& path, const std::function<GriddedImage()>& read,
                               std::optional<ChildLimits> limits = std::nullopt);
// For readers of other layouts (CT projections, recon/ct/ct_file.hpp): `read` returns its
// result serialised as bytes, which cross the pipe as they are; messages name a "CT input".
std::string readBytesIsolated(const std::string& path, const std::function<std::string()>& read,
                              std::optional<ChildLimits> limits = std::nullopt);

}  // namespace recon::io
