// HDF5 input is read in a child process (recon/io/isolated_read.hpp): files that
// crash libhdf5 itself become InputErrors naming the file, the child's own errors
// arrive unchanged, its memory is bounded, and every field of a data set crosses
// the pipe exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <thread>
#include <vector>

#include "io_test_support.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/io/isolated_read.hpp"

namespace recon::test {
namespace {
namespace fs = std::filesystem;

// Inputs on which Debian 12's libhdf5 1.10.8 faults (tests/fuzz/known-libhdf5-defects/README.md).
std::vector<std::string> libhdf5Defects() {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(std::string(RECONSTUDIO_FUZZ_CORPUS) + "/hdf5_input"))
        if (e.path().filename().string().rfind("libhdf5_defect_", 0) == 0) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

TEST(IsolatedRead, FilesThatCrashLibhdf5AreInputErrorsNamingTheFile) {
    const std::vector<std::string> files = libhdf5Defects();
    ASSERT_EQ(files.size(), 10u);
    for (const std::string& path : files) {
        SCOPED_TRACE(path);
        InputSpec spec;
        spec.input = path;
        EXPECT_THROW_MESSAGE(readDataset(spec), InputError, path.c_str());
        EXPECT_THROW_MESSAGE(readImage(path), InputError, path.c_str());
    }
}

TEST(IsolatedRead, ChildKilledBySignalIsInputErrorNamingFileAndSignal) {
    EXPECT_THROW_MESSAGE(io::readDatasetIsolated("damaged.h5",
                                                 [] {
                                                     std::raise(SIGSEGV);
                                                     return Dataset{};
                                                 }),
                         InputError, "input 'damaged.h5'",
                         kUnderAddressSanitizer
                             ? "the HDF5 library crashed while reading it (a memory error, caught by the sanitizer)"
                             : "the HDF5 library crashed while reading it (SIGSEGV)",
                         "damaged or is not a valid HDF5/ISMRMRD file");
    EXPECT_THROW_MESSAGE(io::readImageIsolated("image.h5",
                                               []() -> io::GriddedImage {
                                                   std::abort();
                                               }),
                         InputError, "image 'image.h5'", "crashed", "(SIGABRT)");
}

TEST(IsolatedRead, ChildThatEndsWithoutAResultIsInputError) {
    EXPECT_THROW_MESSAGE(io::readDatasetIsolated("quit.h5",
                                                 []() -> Dataset {
                                                     std::_Exit(3);
                                                 }),
                         InputError, "input 'quit.h5'", "status 3 and no result");
}

TEST(IsolatedRead, ChildErrorsKeepTheirClassAndMessage) {
    const std::string message = "input 'x.h5': group /dataset: missing";
    try {
        io::readDatasetIsolated("x.h5", [&]() -> Dataset { throw InputError(message); });
        ADD_FAILURE() << "no exception";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), message);
    }
    try {
        io::readDatasetIsolated("x.h5", []() -> Dataset { throw Error("cannot write"); });
        ADD_FAILURE() << "no exception";
    } catch (const InputError&) {
        ADD_FAILURE() << "an Error became an InputError";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot write");
    }
}

// libhdf5 allocates sizes a damaged file declares: the child has a memory budget
// (1 GiB for a file too small to need more), and spending it is bad input.
TEST(IsolatedRead, ChildBeyondItsMemoryBudgetIsInputError) {
    static void* volatile kept;
    EXPECT_THROW_MESSAGE(io::readDatasetIsolated("huge.h5",
                                                 []() -> Dataset {
                                                     kept = ::operator new(std::size_t(8) << 30);  // never touched
                                                     return {};
                                                 }),
                         InputError, "input 'huge.h5'",
                         kUnderAddressSanitizer ? "(a memory error, caught by the sanitizer)"
                                                : "out of memory while reading it",
                         kUnderAddressSanitizer ? "damaged" : "1.0 GiB");
    // What the budget allows arrives.
    EXPECT_EQ(io::readDatasetIsolated("d.h5",
                                      [] {
                                          Dataset d;
                                          d.kspace.resize(std::size_t(16) << 20);  // 256 MiB
                                          return d;
                                      })
                  .kspace.size(),
              std::size_t(16) << 20);
}

// A reader that spins (libhdf5 looping on a damaged file) is stopped by its
// processor-time limit; the default grows with the file.
TEST(IsolatedRead, ChildThatSpinsPastItsProcessorTimeIsInputError) {
    io::ChildLimits limits = io::childLimitsFor(0);
    EXPECT_EQ(limits.cpu_seconds, 60);
    EXPECT_EQ(io::childLimitsFor(std::uint64_t(1) << 30).cpu_seconds, 60 + 64);
    limits.cpu_seconds = 1;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW_MESSAGE(io::readDatasetIsolated("loop.h5",
                                                 []() -> Dataset {
                                                     std::atomic<unsigned long> spins{0};
                                                     for (;;) spins.fetch_add(1, std::memory_order_relaxed);
                                                 },
                                                 limits),
                         InputError, "input 'loop.h5'", "still reading it after 1 s of processor time",
                         "damaged or is not a valid HDF5/ISMRMRD file");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

// Found by fuzz_hdf5_input: ISMRMRD acquisitions whose variable-length arrays
// declare billions of values made libhdf5 allocate (and touch) a 9.6 GB conversion
// buffer for a 12 kB file. Within the budget the allocation fails at once.
TEST(IsolatedRead, FileDeclaringGigabytesIsRefusedQuickly) {
    InputSpec spec;
    spec.input = std::string(RECONSTUDIO_FUZZ_CORPUS) + "/hdf5_input/regression_huge_vlen_conversion_buffer.h5";
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW_MESSAGE(readDataset(spec), InputError, "regression_huge_vlen_conversion_buffer.h5", "/dataset/data");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

void expectIdentical(const Dataset& a, const Dataset& b) {
    EXPECT_EQ(a.source, b.source);  // the pipe carries it too
    expectSameDataset(a, b);
}

TEST(IsolatedRead, EveryDatasetFieldCrossesExactly) {
    for (int dims : {2, 3}) {
        Dataset d = smallDataset(dims, 3, 17);
        d.source = "written by the child, with 'quotes' and a\nnewline";
        ASSERT_FALSE(d.density.empty() || d.truth.empty() || d.reference.empty());
        ASSERT_NE(d.basis, kDefaultBasis);
        expectIdentical(io::readDatasetIsolated("d.h5", [&] { return d; }), d);
    }
    // Empty optional parts stay empty.
    Dataset bare = smallDataset(2, 1, 3);
    bare.density.clear();
    bare.truth.clear();
    bare.reference.clear();
    expectIdentical(io::readDatasetIsolated("bare.h5", [&] { return bare; }), bare);
}

TEST(IsolatedRead, LargeResultCrossesIntact) {
    io::GriddedImage sent;
    sent.grid = Grid::make3D(256, 256, 208);  // 13.6 M voxels, 218 MB
    const auto value = [](std::size_t i) { return cdouble(double(i), -0.5 * double(i)); };
    const io::GriddedImage got = io::readImageIsolated("big.h5", [&] {
        io::GriddedImage image{sent.grid, ComplexArray(sent.grid.voxels())};
        for (std::size_t i = 0; i < image.image.size(); ++i) image.image[i] = value(i);
        return image;
    });
    EXPECT_EQ(got.grid, sent.grid);
    ASSERT_EQ(got.image.size(), sent.grid.voxels());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.image.size(); ++i) wrong += got.image[i] != value(i);
    EXPECT_EQ(wrong, 0u);
}

// The child leaves with _exit: it neither flushes this process's stdio buffers
// (which would duplicate their content) nor runs its atexit handlers.
TEST(IsolatedRead, ChildNeverFlushesTheParentsBuffers) {
    ScratchDir dir;
    std::FILE* f = std::fopen(dir.file("log.txt").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("once\n", f);  // still in the buffer while the child exists
    io::readDatasetIsolated("d.h5", [] { return smallDataset(2, 1, 1); });
    EXPECT_THROW(io::readDatasetIsolated("d.h5", []() -> Dataset { throw InputError("bad"); }), InputError);
    std::fclose(f);
    std::ifstream in(dir.file("log.txt"));
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "once\n");
}

// Threads reading at once: every fork happens under the one HDF5 lock.
TEST(IsolatedRead, ConcurrentReadsFromSeveralThreads) {
    ScratchDir dir;
    const Dataset d = smallDataset(3, 2, 8);
    writeDataset(dir.file("d.h5"), d);
    writeImage(dir.file("img.h5"), d.grid, d.truth);
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 5; ++i) {
                if (t % 2 == 0) {
                    InputSpec spec;
                    spec.input = dir.file("d.h5");
                    good += readDataset(spec)->kspace == d.kspace;
                } else {
                    good += readImage(dir.file("img.h5")) == d.truth;
                }
                writeImage(dir.file("out" + std::to_string(t) + ".h5"), d.grid, d.reference);
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(good.load(), 20);
}

}  // namespace
}  // namespace recon::test
