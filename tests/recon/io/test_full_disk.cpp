// Every writer on a full disk: the write fails with an error naming the file
// and the reason, the previous file is left byte for byte as it was, and no
// temporary is left behind. The disk "fills" through tests/support/enospc_shim.c
// (LD_PRELOAD, set by CMake for this executable only), which fails writes with
// ENOSPC after RECONSTUDIO_ENOSPC_AFTER bytes. Also: the target's mode and
// symbolic link are kept, and stale temporaries of a killed run are removed.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/io/file_util.hpp"

namespace recon::test {
namespace {
namespace fs = std::filesystem;

// While alive, the disk takes `bytes` more bytes and then reports itself full.
class DiskFullAfter {
public:
    explicit DiskFullAfter(long long bytes) { ::setenv("RECONSTUDIO_ENOSPC_AFTER", std::to_string(bytes).c_str(), 1); }
    ~DiskFullAfter() { ::unsetenv("RECONSTUDIO_ENOSPC_AFTER"); }  // also resets the shim's count
};

std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) {
        std::ifstream in(e.path(), std::ios::binary);
        files[e.path().filename().string()] = std::string(std::istreambuf_iterator<char>(in), {});
    }
    return files;
}

std::uintmax_t totalSize(const std::map<std::string, std::string>& files) {
    std::uintmax_t n = 0;
    for (const auto& [name, bytes] : files) n += bytes.size();
    return n;
}

struct Writer {
    std::string name, file;  // file: the name the user gives
    std::function<void(const std::string& path, int version)> write;
    std::string named = "";  // what the message must name, if not that file (a data set's arrays)
};

ComplexArray imageVersion(const Grid& g, int version) {
    ComplexArray image(g.voxels());
    for (std::size_t i = 0; i < image.size(); ++i) image[i] = cdouble(double(i % 7) + version, 0.5 * version);
    return image;
}

std::vector<Writer> writers() {
    const Grid grid = Grid::make3D(8, 6, 4);
    auto image = [grid](const char* name, const char* file, ImageWriteOptions opts = {}) {
        return Writer{name, file, [grid, opts](const std::string& p, int v) {
                          writeImage(p, grid, imageVersion(grid, v), opts);
                      }};
    };
    std::vector<Writer> all{
        image("BART image", "image.cfl"),
        Writer{"BART data set", "data.cfl",
               [](const std::string& p, int v) { writeDataset(p, smallDataset(3, 2, unsigned(v))); }, "data_"},
        Writer{"CSV export", "history.csv",
               [](const std::string& p, int v) {
                   std::string text = "iteration,residual\n";
                   for (int i = 0; i < 200; ++i) text += std::to_string(i) + "," + std::to_string(v * 1e-3 * i) + "\n";
                   io::writeFileAtomically(p, text.data(), text.size());
               }},
    };
#ifdef RECONSTUDIO_TEST_HDF5
    all.push_back(image("HDF5 image", "image.h5"));
    all.push_back(Writer{"HDF5 data set", "data.h5",
                         [](const std::string& p, int v) { writeDataset(p, smallDataset(3, 2, unsigned(v))); }});
    all.push_back(Writer{"HDF5 results", "results.h5", [grid](const std::string& p, int v) {
                             ReconstructionRecord rec;
                             rec.grid = grid;
                             rec.iterative = rec.gridding_kb = imageVersion(grid, v);
                             rec.iterations = 3;
                             rec.history.resize(3);
                             writeReconstruction(p, rec);
                         }});
#endif
#ifdef RECONSTUDIO_TEST_ISMRMRD
    all.push_back(image("ISMRMRD image", "image.mrd"));
#endif
#ifdef RECONSTUDIO_TEST_NIFTI
    all.push_back(image("NIfTI", "image.nii"));
    all.push_back(image("NIfTI gzip", "image.nii.gz"));
    all.push_back(image("NIfTI with phase", "both.nii", {.phase = true}));
#endif
#ifdef RECONSTUDIO_TEST_PNG
    all.push_back(image("PNG", "slice.png"));
#endif
    return all;
}

bool shimLoaded() { return ::dlsym(RTLD_DEFAULT, "reconstudio_enospc_shim") != nullptr; }

TEST(FullDisk, EveryWriterFailsNamingTheFileAndKeepsTheOldOne) {
    ASSERT_TRUE(shimLoaded()) << "run with LD_PRELOAD=<enospc shim> (ctest does)";
    for (const Writer& w : writers()) {
        SCOPED_TRACE(w.name);
        ScratchDir dir;
        const std::string target = dir.file(w.file);
        w.write(target, 1);
        const auto before = snapshot(dir.path());
        const std::uintmax_t size = totalSize(before);
        ASSERT_GT(size, 0u);
        // Full from the first byte, after a few bytes, half way, one byte short.
        for (long long budget : {0LL, 5LL, (long long)size / 2, (long long)size - 1}) {
            SCOPED_TRACE("disk full after " + std::to_string(budget) + " of " + std::to_string(size) + " bytes");
            {
                DiskFullAfter full(budget);
                const std::string named = w.named.empty() ? target : dir.file(w.named);
                EXPECT_THROW_MESSAGE(w.write(target, 2), Error, named.c_str(), "No space left on device");
            }
            EXPECT_EQ(snapshot(dir.path()), before) << "the old file changed or a temporary was left";
        }
        // The same write with room succeeds, and changes the file.
        w.write(target, 2);
        EXPECT_NE(snapshot(dir.path()), before);
        EXPECT_TRUE(dir.partialFiles().empty());
    }
}

TEST(FullDisk, ShimFailsPlainWrites) {
    // The shim itself: the test above means nothing if writes were not failing.
    ASSERT_TRUE(shimLoaded());
    ScratchDir dir;
    DiskFullAfter full(3);
    std::FILE* f = std::fopen(dir.file("x").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(std::fwrite("abcdef", 1, 6, f), 3u);
    std::fclose(f);
}

TEST(AtomicOutput, KeepsModeFollowsLinksAndRemovesStaleTemporaries) {
    for (const Writer& w : writers()) {
        SCOPED_TRACE(w.name);
        ScratchDir dir;
        const std::string target = dir.file(w.file);
        w.write(target, 1);
        if (!w.named.empty()) continue;  // a data set of several files: covered by each array's writer
        ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
        w.write(target, 2);
        struct stat st {};
        ASSERT_EQ(::stat(target.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 0600u) << "the existing file's permissions were not kept";

        // A link to the file: the link stays a link, its target gets the new data.
        const std::string ext = io::extensionOf(w.file);
        const std::string link = dir.file("link" + ext);
        fs::create_symlink(w.file, link);
        const auto target_before = snapshot(dir.path()).at(w.file);
        w.write(link, 3);
        EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced by a regular file";
        EXPECT_NE(snapshot(dir.path()).at(w.file), target_before) << "the link's target was not written";

        // A temporary of a process that no longer exists (a pid above Linux's
        // largest) is removed; one of a live process (this one's parent) is not.
        const std::string stem = fs::path(w.file).filename().string();
        const std::string base = stem.substr(0, stem.size() - ext.size());
        const std::string stale = dir.file("." + base + ".part-4194305-0" + ext);
        const std::string live = dir.file("." + base + ".part-" + std::to_string(::getppid()) + "-0" + ext);
        const std::string other = dir.file(".unrelated.part-4194305-0" + ext);
        for (const std::string& p : {stale, live, other}) std::ofstream(p) << "partial";
        w.write(target, 4);
        EXPECT_FALSE(fs::exists(stale)) << "a stale temporary of this target was left";
        EXPECT_TRUE(fs::exists(live)) << "a live process's temporary was removed";
        EXPECT_TRUE(fs::exists(other)) << "another target's temporary was removed";
    }
}

}  // namespace
}  // namespace recon::test
