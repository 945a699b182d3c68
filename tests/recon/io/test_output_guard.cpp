// An output that is (or links to) an input of the run is refused before any work.
#include <gtest/gtest.h>

#include <fstream>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/output_guard.hpp"

namespace recon::test {
namespace {
namespace fs = std::filesystem;

TEST(OutputGuard, RefusesAnInputUnderAnyName) {
    ScratchDir dir;
    for (const char* f : {"raw.mrd", "k.cfl", "k.hdr", "t.cfl", "t.hdr", "data.h5"}) std::ofstream(dir.file(f)) << "x";
    fs::create_symlink("raw.mrd", dir.file("link.mrd"));
    fs::create_hard_link(dir.file("k.cfl"), dir.file("hard.cfl"));
    InputSpec ismrmrd;
    ismrmrd.input = dir.file("raw.mrd");
    InputSpec bart;
    bart.trajectory = dir.file("t");
    bart.kspace = dir.file("k.cfl");

    EXPECT_THROW_MESSAGE(io::refuseOverwritingInputs(ismrmrd, dir.file("raw.mrd"), "--output"), InputError,
                         "--output", "would overwrite the input", "raw.mrd", ".h5 output can hold both");
    EXPECT_THROW_MESSAGE(io::refuseOverwritingInputs(ismrmrd, dir.file("link.mrd"), "--output"), InputError,
                         "link.mrd", "raw.mrd");
    // BART names stand for .cfl and .hdr: any spelling of the k-space array is refused.
    for (const char* out : {"k", "k.cfl", "k.hdr", "hard.cfl"})
        EXPECT_THROW_MESSAGE(io::refuseOverwritingInputs(bart, dir.file(out), "--gridding-output"), InputError,
                             "--gridding-output", "would overwrite the input");
    EXPECT_THROW(io::refuseOverwritingInputs(bart, dir.file("t.cfl"), "--output"), InputError);
    // Other files, files not there yet, and results added to an HDF5 file are fine.
    EXPECT_NO_THROW(io::refuseOverwritingInputs(bart, dir.file("image.cfl"), "--output"));
    EXPECT_NO_THROW(io::refuseOverwritingInputs(ismrmrd, dir.file("raw.nii"), "--output"));
    InputSpec own;
    own.input = dir.file("data.h5");
    EXPECT_NO_THROW(io::refuseOverwritingInputs(own, dir.file("data.h5"), "--output"));
}

}  // namespace
}  // namespace recon::test
