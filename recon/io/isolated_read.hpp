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
// caller's, in the parent. The child may allocate at most 1 GiB plus 64 times the
// file's size: libhdf5 allocates sizes a damaged file declares. Cost: the data
// cross the pipe once, and while they do, child and parent each hold a copy.
#pragma once

#include <functional>
#include <string>

#include "recon/core/dataset.hpp"
#include "recon/core/types.hpp"

namespace recon::io {

struct GriddedImage {
    Grid grid;
    ComplexArray image;
};

// Runs `read` in a child process and returns what it returned. If `read` throws
// InputError or another recon::Error, the same class (InputError or Error) is thrown
// here with the same message; std::bad_alloc (the child's memory budget spent)
// becomes InputError. If the child dies (a signal, a sanitizer's report) or ends
// without a complete result, throws InputError "input '<path>': the HDF5 library
// crashed while reading it (SIGSEGV): ..." ("image '<path>'" for readImageIsolated).
// `read` must not take the HDF5 lock nor use OpenMP. The tests call these directly.
Dataset readDatasetIsolated(const std::string& path, const std::function<Dataset()>& read);
GriddedImage readImageIsolated(const std::string& path, const std::function<GriddedImage()>& read);

}  // namespace recon::io
