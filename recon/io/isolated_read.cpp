#include "recon/io/isolated_read.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "recon/core/errors.hpp"
#include "recon/io/hdf5_util.hpp"

// Defined only in sanitizer builds (the death callback) and SanitizerCoverage builds
// such as the fuzzers (the counters' section); null elsewhere.
extern "C" {
__attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));
__attribute__((weak)) extern std::uint8_t __start___sancov_cntrs[];
__attribute__((weak)) extern std::uint8_t __stop___sancov_cntrs[];
}

namespace recon::io {
namespace {

// How a child without a result may end, besides by a signal.
constexpr int kSanitizerReportExit = 86;  // a sanitizer reported a fault (see prepareForFaults)
constexpr int kParentGoneExit = 87;       // nobody reads the result any more

// What the child may allocate beyond what it inherits: room for any data set a file
// of its size can hold (compressed data expand, float32 becomes float64), never what
// a damaged size field declares (libhdf5 allocates sizes read from the file, such as
// 9.6 GB of conversion buffer for a 12 kB ISMRMRD file; found by fuzz_hdf5_input).
constexpr std::uint64_t kMemoryBase = std::uint64_t(1) << 30;
constexpr std::uint64_t kMemoryPerFileByte = 64;
// Processor time: far more than decoding any file of that size takes (HDF5 reads at
// hundreds of MB/s), far less than forever.
constexpr double kCpuSecondsBase = 60;
constexpr double kCpuSecondsPerFileByte = 1.0 / (16 << 20);

// The message, in this order: kBegin, an Outcome, the result or the error's message,
// the child's coverage counters (fuzz builds; empty elsewhere), kEnd. Without kEnd the
// child died while writing it.
constexpr std::uint64_t kBegin = 0x7265636f6e2d696fULL;
constexpr std::uint64_t kEnd = 0x646f6e652d726561ULL;
enum class Outcome : std::uint8_t { Result, InputError, Error, BadAlloc, OtherException };
// A count beyond this is a damaged message, not data (arrays are limited far below).
constexpr std::uint64_t kMaxMessageBytes = std::uint64_t(1) << 40;

template <class T, class U>
concept Like = std::same_as<std::remove_const_t<T>, U>;

// Plain values (numbers, enums, Grid) cross as their bytes: both ends are this program.
template <class T>
concept Plain = std::is_trivially_copyable_v<T>;
static_assert(Plain<Grid> && Plain<BasisFunction>);

// Every field that crosses the pipe, listed once for both directions: `a` is a
// PipeWriter (on const objects) or a PipeReader.
template <class A, Like<Trajectory> T>
void fields(A& a, T& t) {
    a(t.dims, t.k, t.kind, t.readout_length);
}
template <class A, Like<Dataset> D>
void fields(A& a, D& d) {
    a(d.name, d.source, d.grid, d.trajectory, d.coils, d.kspace, d.density, d.truth, d.reference, d.basis, d.noise,
      d.whitened_by_noise_samples);
}
template <class A, Like<FramesRead> F>
void fields(A& a, F& f) {
    a(f.shared, f.index, f.frames, f.partitions, f.partition_centre);
}
static_assert(Plain<FrameIndex>);
template <class A, Like<GriddedImage> I>
void fields(A& a, I& i) {
    a(i.grid, i.image);
}
#if defined(__GLIBCXX__) && defined(__LP64__)
static_assert(sizeof(Dataset) == 320 && sizeof(Trajectory) == 72,
              "Dataset or Trajectory changed: list the new field in fields() above, or it is lost in the child");
#endif

struct ParentGone {};  // the pipe's read end is closed

class PipeWriter {
public:
    explicit PipeWriter(int fd) : fd_(fd) {}
    template <class... T>
    void operator()(const T&... v) {
        (put(v), ...);
    }

private:
    template <Plain T>
    void put(const T& v) {
        bytes(&v, sizeof v);
    }
    template <Plain T>
    void put(const std::vector<T>& v) {
        put(std::uint64_t(v.size()));
        bytes(v.data(), v.size() * sizeof(T));
    }
    void put(const std::string& s) {
        put(std::uint64_t(s.size()));
        bytes(s.data(), s.size());
    }
    template <class T>
        requires(!Plain<T>)
    void put(const std::vector<T>& v) {
        put(std::uint64_t(v.size()));
        for (const T& x : v) put(x);
    }
    template <class T>
        requires(!Plain<T>)
    void put(const T& v) {
        fields(*this, v);
    }
    void bytes(const void* data, std::size_t n) {
        const char* at = static_cast<const char*>(data);
        while (n > 0) {
            const ssize_t written = ::write(fd_, at, n);
            if (written < 0 && errno == EINTR) continue;
            if (written <= 0) throw ParentGone{};
            at += written;
            n -= std::size_t(written);
        }
    }
    int fd_;
};

struct MessageCut {};  // the message ended early or is damaged

class PipeReader {
public:
    explicit PipeReader(int fd) : fd_(fd) {}
    template <class... T>
    void operator()(T&... v) {
        (get(v), ...);
    }

private:
    template <Plain T>
    void get(T& v) {
        bytes(&v, sizeof v);
    }
    template <Plain T>
    void get(std::vector<T>& v) {
        v.resize(count(sizeof(T)));
        bytes(v.data(), v.size() * sizeof(T));
    }
    void get(std::string& s) {
        s.resize(count(1));
        bytes(s.data(), s.size());
    }
    template <class T>
        requires(!Plain<T>)
    void get(std::vector<T>& v) {
        v.resize(count(sizeof(T)));
        for (T& x : v) get(x);
    }
    template <class T>
        requires(!Plain<T>)
    void get(T& v) {
        fields(*this, v);
    }
    std::size_t count(std::size_t element_bytes) {
        std::uint64_t n = 0;
        get(n);
        if (n > kMaxMessageBytes / element_bytes) throw MessageCut{};
        return std::size_t(n);
    }
    void bytes(void* data, std::size_t n) {
        char* at = static_cast<char*>(data);
        while (n > 0) {
            const ssize_t got = ::read(fd_, at, n);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) throw MessageCut{};
            at += got;
            n -= std::size_t(got);
        }
    }
    int fd_;
};

// Fuzz builds: SanitizerCoverage's counters of the code that ran. What the child runs
// (all of the readers) would count only in its copy, hidden from libFuzzer, so the
// child sends its counters and the parent keeps the larger count of each.
std::span<std::uint8_t> coverageCounters() {
    if (!__start___sancov_cntrs || !__stop___sancov_cntrs) return {};
    return {__start___sancov_cntrs, __stop___sancov_cntrs};
}

void mergeCoverage(const std::vector<std::uint8_t>& child) {
    const std::span<std::uint8_t> own = coverageCounters();
    if (child.size() != own.size()) return;
    for (std::size_t i = 0; i < own.size(); ++i) own[i] = std::max(own[i], child[i]);
}

[[noreturn]] void exitAfterSanitizerReport() { ::_exit(kSanitizerReportExit); }

std::uint64_t fileBytes(const std::string& path) {
    std::error_code ec;
    const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
    return ec ? 0 : bytes;
}


// The process's private writable memory (VmData), 0 when /proc cannot say.
std::uint64_t privateWritableBytes() {
    char status[4096];  // VmData is among the first lines
    const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    const ssize_t n = ::read(fd, status, sizeof status - 1);
    ::close(fd);
    if (n <= 0) return 0;
    status[n] = '\0';
    const char* line = std::strstr(status, "VmData:");
    return line ? std::strtoull(line + 7, nullptr, 10) * 1024 : 0;
}

// In the child: RLIMIT_DATA bounds private writable memory (heap and anonymous
// mappings) in total, so the budget goes on top of what the child starts with.
// Beyond it an allocation fails: libhdf5 reports an error, C++ throws std::bad_alloc.
void limitMemory(std::uint64_t budget) {
    const std::uint64_t inherited = privateWritableBytes();
    rlimit limit{};
    if (inherited == 0 || ::getrlimit(RLIMIT_DATA, &limit) != 0) return;
    const rlim_t wanted = rlim_t(inherited + budget);
    limit.rlim_cur = std::min(limit.rlim_cur, wanted);  // RLIM_INFINITY is the largest value
    limit.rlim_max = std::min(limit.rlim_max, wanted);
    ::setrlimit(RLIMIT_DATA, &limit);
}

// In the child: beyond the soft limit the kernel sends SIGXCPU (which ends the
// child), beyond the hard one SIGKILL.
void limitCpuTime(double seconds) {
    const rlim_t soft = rlim_t(std::max(1.0, std::ceil(seconds)));
    rlimit limit{};
    if (::getrlimit(RLIMIT_CPU, &limit) != 0) return;
    limit.rlim_cur = std::min(limit.rlim_cur, soft);
    limit.rlim_max = std::min(limit.rlim_max, soft + 5);
    ::setrlimit(RLIMIT_CPU, &limit);
}

// In the child: a fault ends the child, and only it. No handler of the parent runs
// (libFuzzer's writes a crash file and stops the fuzzer; a sanitizer's death ends in
// our callback, after its report), no core dump is written for a damaged file, and
// the child does not outlive the parent.
void prepareForFaults(pid_t parent) {
    const bool sanitized = __sanitizer_set_death_callback != nullptr;
    if (sanitized) __sanitizer_set_death_callback(exitAfterSanitizerReport);
    for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
        // Sanitizers catch these three to report them, then call the callback above.
        const bool reported_by_sanitizer = fault == SIGSEGV || fault == SIGBUS || fault == SIGFPE;
        if (!(sanitized && reported_by_sanitizer)) ::signal(fault, SIG_DFL);
    }
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(kParentGoneExit);  // it died before prctl
}

// The child's whole life: read, send, _exit (no atexit handlers, no flush of the
// parent's stdio buffers, no HDF5 shutdown; never a return into the parent's code).
template <class Result>
[[noreturn]] void runChild(int fd, pid_t parent, const ChildLimits& limits, const std::function<Result()>& read) {
    prepareForFaults(parent);
    limitMemory(limits.memory_bytes);
    limitCpuTime(limits.cpu_seconds);
    std::optional<Result> result;
    Outcome outcome = Outcome::Result;
    std::string message;
    try {
        result.emplace(read());
    } catch (const InputError& e) {
        outcome = Outcome::InputError;
        message = e.what();
    } catch (const Error& e) {
        outcome = Outcome::Error;
        message = e.what();
    } catch (const std::bad_alloc&) {
        outcome = Outcome::BadAlloc;
    } catch (const std::exception& e) {
        outcome = Outcome::OtherException;
        message = e.what();
    } catch (...) {
        outcome = Outcome::OtherException;
        message = "an exception of unknown type";
    }
    int status = 0;
    try {
        PipeWriter out(fd);
        out(kBegin, outcome);
        if (result) out(*result);
        else out(message);
        const std::span<std::uint8_t> counters = coverageCounters();
        out(std::vector<std::uint8_t>(counters.begin(), counters.end()), kEnd);
    } catch (const ParentGone&) {
        status = kParentGoneExit;
    }
    ::_exit(status);
}

template <class Result>
struct Received {
    bool complete = false;
    Outcome outcome = Outcome::Result;
    std::optional<Result> result;
    std::string message;
};

// Reads the child's message while the child writes it (a pipe holds little), to its
// end or, when it is cut short or damaged, to EOF (the child has ended).
template <class Result>
Received<Result> receive(int fd) {
    Received<Result> got;
    PipeReader in(fd);
    try {
        std::uint64_t begin = 0, end = 0;
        in(begin, got.outcome);
        if (begin != kBegin || got.outcome > Outcome::OtherException) throw MessageCut{};
        if (got.outcome == Outcome::Result) in(got.result.emplace());
        else in(got.message);
        std::vector<std::uint8_t> counters;
        in(counters, end);
        if (end != kEnd) throw MessageCut{};
        mergeCoverage(counters);
        got.complete = true;
    } catch (const MessageCut&) {
        got.result.reset();
        char rest[4096];
        for (ssize_t n = 1; n > 0 || (n < 0 && errno == EINTR);) n = ::read(fd, rest, sizeof rest);
    }
    return got;
}

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    ~FileDescriptor() { close(); }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return fd_; }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
};

// The child, waited for once; killed first if the parent gives up on it early.
class ChildProcess {
public:
    explicit ChildProcess(pid_t pid) : pid_(pid) {}
    ~ChildProcess() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        wait();
    }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    // waitpid's status; none when the process reaped it elsewhere (SIGCHLD ignored).
    std::optional<int> wait() {
        int status = 0;
        pid_t done;
        while ((done = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
        }
        pid_ = 0;
        if (done < 0) return std::nullopt;
        return status;
    }

private:
    pid_t pid_;
};

struct ReadKind {
    const char* what;      // how messages name the file: "input 'x.h5'"
    const char* expected;  // what it should have been
};
constexpr ReadKind kDatasetRead{"input", "HDF5/ISMRMRD"};
constexpr ReadKind kImageRead{"image", "ReconStudio HDF5"};
constexpr ReadKind kCtRead{"CT input", "ReconStudio CT HDF5"};

std::string crashMessage(const std::string& origin, const ReadKind& kind, std::optional<int> status,
                         const ChildLimits& limits) {
    if (status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGXCPU) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.0f", std::ceil(limits.cpu_seconds));
        return origin + ": the HDF5 library was still reading it after " + seconds +
               " s of processor time: the file is damaged or is not a valid " + kind.expected + " file";
    }
    std::string how = "it ended without a result";
    if (status && WIFSIGNALED(*status)) {
        const int signal = WTERMSIG(*status);
        const char* name = ::sigabbrev_np(signal);
        how = name ? std::string("SIG") + name : "signal " + std::to_string(signal);
    } else if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == kSanitizerReportExit) {
        how = "a memory error, caught by the sanitizer";
    } else if (status && WIFEXITED(*status)) {
        how = "it ended with status " + std::to_string(WEXITSTATUS(*status)) + " and no result";
    }
    return origin + ": the HDF5 library crashed while reading it (" + how + "): the file is damaged or is not a valid " +
           kind.expected + " file";
}

template <class Result>
Result readInChild(const ReadKind& kind, const std::string& path, const std::function<Result()>& read,
                   std::optional<ChildLimits> given) {
    const std::string origin = std::string(kind.what) + " '" + path + "'";
    auto systemError = [&](const char* what, int error) {
        return Error(origin + ": " + what + " to read it failed: " + std::strerror(error));
    };
    int ends[2];
    // Close-on-exec: a program another thread starts meanwhile must not keep the
    // write end open, or the parent would never see EOF after a crash.
    if (::pipe2(ends, O_CLOEXEC) != 0) throw systemError("creating a pipe", errno);
    FileDescriptor from_child(ends[0]), to_parent(ends[1]);
    ::fcntl(from_child.get(), F_SETPIPE_SZ, 1 << 20);  // fewer round trips for large data; may be refused
    const pid_t parent = ::getpid();
    const std::uint64_t file_bytes = fileBytes(path);
    const ChildLimits limits = given.value_or(childLimitsFor(file_bytes));
    pid_t pid;
    int fork_error;
    {
        h5::Hdf5Session hdf5;  // no thread of ours is inside libhdf5 while it is copied
        pid = ::fork();
        fork_error = errno;
        if (pid == 0) {
            from_child.close();
            // Never returns, so never leaves this scope: it must not unlock a lock it does not own.
            runChild(to_parent.get(), parent, limits, read);
        }
    }
    if (pid < 0) throw systemError("starting a process", fork_error);
    ChildProcess child(pid);
    to_parent.close();  // so that EOF comes when the child ends
    Received<Result> got = receive<Result>(from_child.get());
    const std::optional<int> status = child.wait();
    const bool exited_cleanly = !status || (WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    if (!got.complete || !exited_cleanly) throw InputError(crashMessage(origin, kind, status, limits));
    switch (got.outcome) {
        case Outcome::Result: return std::move(*got.result);
        case Outcome::InputError: throw InputError(got.message);
        case Outcome::Error: throw Error(got.message);
        case Outcome::BadAlloc:
            throw InputError(origin + ": out of memory while reading it (the reader may use " +
                             OutOfMemory::humanBytes(limits.memory_bytes) + " for a file of " +
                             OutOfMemory::humanBytes(file_bytes) +
                             "): the file is damaged or its data set too large for this machine");
        case Outcome::OtherException: break;
    }
    throw std::runtime_error(got.message);  // not ours: stays what it was, a finding for the fuzzers
}

}  // namespace

ChildLimits childLimitsFor(std::uint64_t file_bytes) {
    return {kMemoryBase + kMemoryPerFileByte * file_bytes, kCpuSecondsBase + kCpuSecondsPerFileByte * double(file_bytes)};
}

Dataset readDatasetIsolated(const std::string& path, const std::function<Dataset()>& read,
                            std::optional<ChildLimits> limits) {
    return readInChild(kDatasetRead, path, read, limits);
}

FramesRead readFramesIsolated(const std::string& path, const std::function<FramesRead()>& read,
                              std::optional<ChildLimits> limits) {
    return readInChild(kDatasetRead, path, read, limits);
}

GriddedImage readImageIsolated(const std::string& path, const std::function<GriddedImage()>& read,
                               std::optional<ChildLimits> limits) {
    return readInChild(kImageRead, path, read, limits);
}

std::string readBytesIsolated(const std::string& path, const std::function<std::string()>& read,
                              std::optional<ChildLimits> limits) {
    return readInChild(kCtRead, path, read, limits);
}

}  // namespace recon::io
