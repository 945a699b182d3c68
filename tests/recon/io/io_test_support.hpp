// Helpers for the I/O tests: a scratch folder per test, BART on the command
// line, small deterministic data sets.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "recon/core/dataset.hpp"

#include "../../support/sanitizer.hpp"

namespace recon::test {

#ifdef RECONSTUDIO_TEST_ASAN
// Under ASan a fault in a reading child is reported by the sanitizer (which then
// ends the child through the death callback), not delivered as the signal, and
// a throwing operator new beyond the memory budget ends in ASan's out-of-memory
// report instead of std::bad_alloc: the reader calls both "a memory error,
// caught by the sanitizer".
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

// A fresh folder under the test temp dir, removed with everything in it.
class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    const std::filesystem::path& path() const { return path_; }
    // Names of leftover temporaries (".<name>.part-*") from atomic writes.
    std::vector<std::string> partialFiles() const;

private:
    std::filesystem::path path_;
};

// The `bart` executable found at configure time ("" when absent).
std::string bartExecutable();
// Runs `bart <args>` in `dir`; fails the test on a non-zero exit.
void bart(const ScratchDir& dir, const std::string& args);
#define RECONSTUDIO_REQUIRE_BART()                                                   \
    do {                                                                             \
        if (::recon::test::bartExecutable().empty()) GTEST_SKIP() << "bart not found"; \
    } while (0)

// A small 2D or 3D data set with every optional part, values from a seed.
Dataset smallDataset(int dims, int coils, unsigned seed);

// Every field of `a` equals `b`'s exactly, except `source` (which a reader sets to
// say where the data came from).
void expectSameDataset(const Dataset& a, const Dataset& b);

// Substring check with a readable failure.
#define EXPECT_THROW_MESSAGE(statement, exception, ...)                                 \
    do {                                                                                \
        try {                                                                           \
            statement;                                                                  \
            ADD_FAILURE() << "expected " #exception " from " #statement;                \
        } catch (const exception& e) {                                                  \
            const std::string what = e.what();                                          \
            for (const char* part : {__VA_ARGS__})                                      \
                EXPECT_NE(what.find(part), std::string::npos) << "message: " << what    \
                                                              << "\nlacks: " << part;   \
        }                                                                               \
    } while (0)

}  // namespace recon::test
