// Error kinds the engine raises. Messages name what is wrong and, for input,
// where (file, dataset); the CLI prints them and exits non-zero, the GUI shows them.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

namespace recon {

// A number as messages print it: the shortest form that reads back exactly
// ("3", "0.02", "1e+300"), never printf's "%f" ("3.000000", 300 digits).
std::string formatNumber(double value);

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Bad input: shapes, NaN, units, files.
struct InputError : Error {
    using Error::Error;
};

// The numbers stopped being numbers (overflow or NaN in the working precision).
struct NumericalError : Error {
    using Error::Error;
};

// A cancel request took effect; whatever was complete before it is kept by the caller.
struct Cancelled : Error {
    Cancelled() : Error("cancelled") {}
};

// A device (or host) could not provide `bytes_needed`; callers may fall back.
struct OutOfMemory : Error {
    OutOfMemory(const std::string& what, std::size_t bytes_needed)
        : Error(what + ": out of memory (needs " + humanBytes(bytes_needed) + ")"), bytes(bytes_needed) {}
    std::size_t bytes;
    static std::string humanBytes(std::size_t b);
};

// Progress and cancellation for long single operations (F^H d, Q, gridding).
// Both members are optional. Cancellation is cooperative: work polls check().
struct Progress {
    std::function<void(double fraction)> report;
    const std::atomic<bool>* cancel = nullptr;

    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
    void check() const {
        if (cancelled()) throw Cancelled();
    }
    void update(double fraction) const {
        if (report) report(fraction);
        check();
    }
    // The stage [from, to] of a longer operation: its fractions 0..1 report as from..to.
    Progress part(double from, double to) const {
        Progress p{{}, cancel};
        if (report) p.report = [outer = report, from, to](double f) { outer(from + (to - from) * f); };
        return p;
    }
};

}  // namespace recon
