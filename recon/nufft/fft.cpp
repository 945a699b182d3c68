#include "recon/core/errors.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/nufft/fftw_planner.hpp"

#include <fftw3.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace recon {
namespace {

int g_threads = 0;

}  // namespace

namespace fftw {
namespace {

struct Wisdom {
    bool chosen = false;    // folder set (from the environment, or by useWisdomFolder)
    std::string folder;     // "" when disabled
    bool read[2] = {};      // the folder's file read, per precision (f32, f64)
    std::string saved[2];   // the last text read or written, per precision
    bool fresh = false;     // a plan was measured since the last save (noteNewWisdom)
};

Wisdom& wisdom() {
    static Wisdom w;
    return w;
}

std::string pathFor(int precision) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0 || !*host) std::snprintf(host, sizeof host, "%s", "unknown-host");
    return wisdom().folder + "/fftw-wisdom-" + host + (precision == 0 ? "-f32" : "-f64");
}

std::string exportText(int precision) {
    char* text = precision == 0 ? fftwf_export_wisdom_to_string() : fftw_export_wisdom_to_string();
    std::string s = text ? text : "";
    std::free(text);
    return s;
}

// The wisdom folder, not nufft's business to write through recon/io (a lower layer): a
// temporary file in the same folder, renamed over the old one, so a reader never sees
// half a file; any failure leaves the old file and costs only the next run's planning.
void writeFile(const std::string& path, const std::string& text) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string temp = path + ".tmp." + std::to_string(getpid());
    std::FILE* f = std::fopen(temp.c_str(), "wb");
    if (!f) return;
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (std::fclose(f) != 0 || !ok || std::rename(temp.c_str(), path.c_str()) != 0) std::remove(temp.c_str());
}

}  // namespace

std::mutex& plannerMutex() {
    static std::mutex m;
    return m;
}

std::string wisdomFolder() {
    const char* env = std::getenv("RECONSTUDIO_FFTW_WISDOM");
    if (env && std::string(env) == "0") return "";
    if (env && *env) return env;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/reconstudio";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/reconstudio";
    return "";
}

void prepare(bool single_precision) {
    static bool threads = false;
    if (!threads) {
        threads = true;
        fftw_init_threads();
        fftwf_init_threads();
        fftw_set_timelimit(kPlanningSeconds);
        fftwf_set_timelimit(kPlanningSeconds);
    }
    Wisdom& w = wisdom();
    if (!w.chosen) useWisdomFolder(wisdomFolder());
    const int precision = single_precision ? 0 : 1;
    if (w.read[precision] || w.folder.empty()) return;
    w.read[precision] = true;
    const std::string path = pathFor(precision);
    std::ifstream in(path, std::ios::binary);
    if (!in) return;  // a first run
    std::ostringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const int ok = precision == 0 ? fftwf_import_wisdom_from_string(s.c_str()) : fftw_import_wisdom_from_string(s.c_str());
    if (!ok) {
        std::fprintf(stderr, "note: FFTW wisdom file '%s' is damaged: ignored (it will be replaced)\n", path.c_str());
        if (precision == 0)
            fftwf_forget_wisdom();
        else
            fftw_forget_wisdom();
        return;
    }
    // The file's own text: FFTW exports the same entries while no plan is added, though not
    // always in the same order (savePlans compares the entries).
    w.saved[precision] = s;
}

std::string wisdomPath(bool single_precision) { return pathFor(single_precision ? 0 : 1); }

void useWisdomFolder(const std::string& folder) {
    Wisdom& w = wisdom();
    w.chosen = true;
    w.folder = folder;
    fftwf_forget_wisdom();
    fftw_forget_wisdom();
    w.read[0] = w.read[1] = false;
    w.saved[0] = w.saved[1] = "";
}

unsigned planningFlags(std::size_t points) {
    return wisdom().folder.empty() || points > kMeasureLimit ? FFTW_ESTIMATE : FFTW_MEASURE;
}

void noteNewWisdom() { wisdom().fresh = true; }

namespace {
// Wisdom texts with the same entries: FFTW's export order follows its hash table, which an
// import does not rebuild as the export that wrote the file had it.
bool sameEntries(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    auto lines = [](const std::string& t) {
        std::vector<std::string> out;
        std::istringstream in(t);
        for (std::string line; std::getline(in, line);) out.push_back(std::move(line));
        std::sort(out.begin(), out.end());
        return out;
    };
    return a == b || lines(a) == lines(b);
}
}  // namespace

void savePlans() {
    Wisdom& w = wisdom();
    if (w.folder.empty() || !w.fresh) return;
    w.fresh = false;
    for (int precision : {0, 1}) {
        if (!w.read[precision]) continue;  // no plan of this precision was made
        std::string now = exportText(precision);
        if (sameEntries(now, w.saved[precision])) continue;
        writeFile(pathFor(precision), now);
        w.saved[precision] = std::move(now);
    }
}

}  // namespace fftw

int cpuThreads() { return g_threads > 0 ? g_threads : omp_get_max_threads(); }
void setCpuThreads(int n) {
    g_threads = n;
    if (n > 0) omp_set_num_threads(n);
}

template <class T>
struct FftTraits;
template <>
struct FftTraits<double> {
    using plan = fftw_plan;
    using cpx = fftw_complex;
};
template <>
struct FftTraits<float> {
    using plan = fftwf_plan;
    using cpx = fftwf_complex;
};

// A cancellable transform polls between batches of about this many points (32 MB in
// float32, some 50 ms on two cores).
constexpr std::size_t kBatchPoints = std::size_t(1) << 22;

template <class T>
struct FftPlan<T>::Impl {
    using Plan = typename FftTraits<T>::plan;
    Plan plan = nullptr;
    std::vector<int> n;  // FFTW's order: slowest axis first
    int sign = 0;
    // The row-column split for execute(data, progress), planned on first use: transforms
    // over all axes but the slowest for a batch of its planes, then 1D transforms along
    // it for a batch of lines ("rest": the last, shorter batch).
    std::once_flag batched_once;
    std::size_t inner = 1;  // points per plane
    int planes_per_batch = 0, lines_per_batch = 0;
    Plan planes = nullptr, planes_rest = nullptr, lines = nullptr, lines_rest = nullptr;

    static Plan many(int rank, const int* n, int howmany, int stride, int dist, int sign, std::size_t size) {
        if (howmany <= 0) return nullptr;
        Plan p;
        if constexpr (std::is_same_v<T, double>) {
            fftw_plan_with_nthreads(cpuThreads());
            auto* buf = fftw_alloc_complex(size);
            p = fftw::planned(size, [&](unsigned flags) {
                return fftw_plan_many_dft(rank, n, howmany, buf, nullptr, stride, dist, buf, nullptr, stride, dist, sign,
                                          flags | FFTW_UNALIGNED);
            });
            fftw_free(buf);
        } else {
            fftwf_plan_with_nthreads(cpuThreads());
            auto* buf = fftwf_alloc_complex(size);
            p = fftw::planned(size, [&](unsigned flags) {
                return fftwf_plan_many_dft(rank, n, howmany, buf, nullptr, stride, dist, buf, nullptr, stride, dist, sign,
                                           flags | FFTW_UNALIGNED);
            });
            fftwf_free(buf);
        }
        if (!p) throw Error("FFTW could not plan a batched transform");
        return p;
    }
    void planBatches(std::size_t size) {
        const int slow = n[0];
        inner = size / std::size_t(slow);
        planes_per_batch = int(std::clamp<std::size_t>(kBatchPoints / inner, 1, std::size_t(slow)));
        lines_per_batch = int(std::clamp<std::size_t>(kBatchPoints / std::size_t(slow), 1, inner));
        const int rank = int(n.size()) - 1;
        std::lock_guard<std::mutex> lock(fftw::plannerMutex());
        fftw::prepare<T>();
        planes = many(rank, n.data() + 1, planes_per_batch, 1, int(inner), sign, std::size_t(planes_per_batch) * inner);
        planes_rest = many(rank, n.data() + 1, slow % planes_per_batch, 1, int(inner), sign,
                           std::size_t(slow % planes_per_batch) * inner);
        // A batch of lines starting anywhere spans (slow - 1) * inner + lines points.
        const std::size_t span = (std::size_t(slow) - 1) * inner;
        lines = many(1, n.data(), lines_per_batch, int(inner), 1, sign, span + std::size_t(lines_per_batch));
        lines_rest = many(1, n.data(), int(inner % std::size_t(lines_per_batch)), int(inner), 1, sign,
                          span + inner % std::size_t(lines_per_batch));
        fftw::savePlans();
    }
    static void run(Plan p, std::complex<T>* at) {
        using C = typename FftTraits<T>::cpx;
        auto* c = reinterpret_cast<C*>(at);
        if constexpr (std::is_same_v<T, double>)
            fftw_execute_dft(p, c, c);
        else
            fftwf_execute_dft(p, c, c);
    }
    static void destroy(Plan p) {
        if (!p) return;
        if constexpr (std::is_same_v<T, double>)
            fftw_destroy_plan(p);
        else
            fftwf_destroy_plan(p);
    }
};

template <class T>
FftPlan<T>::FftPlan(std::array<int, 3> shape, int dims, FftDirection dir) : impl_(new Impl) {
    std::vector<int>& n = impl_->n;  // FFTW wants slowest axis first
    for (int a = dims - 1; a >= 0; --a) n.push_back(shape[a]);
    size_ = 1;
    for (int a = 0; a < dims; ++a) size_ *= std::size_t(shape[a]);
    const int sign = impl_->sign = dir == FftDirection::Forward ? FFTW_FORWARD : FFTW_BACKWARD;
    std::lock_guard<std::mutex> lock(fftw::plannerMutex());
    fftw::prepare<T>();
    // A scratch buffer: measuring overwrites it, and the plan runs on any buffer (unaligned).
    if constexpr (std::is_same_v<T, double>) {
        fftw_plan_with_nthreads(cpuThreads());
        auto* buf = fftw_alloc_complex(size_);
        impl_->plan = fftw::planned(size_, [&](unsigned flags) {
            return fftw_plan_dft(int(n.size()), n.data(), buf, buf, sign, flags | FFTW_UNALIGNED);
        });
        fftw_free(buf);
    } else {
        fftwf_plan_with_nthreads(cpuThreads());
        auto* buf = fftwf_alloc_complex(size_);
        impl_->plan = fftw::planned(size_, [&](unsigned flags) {
            return fftwf_plan_dft(int(n.size()), n.data(), buf, buf, sign, flags | FFTW_UNALIGNED);
        });
        fftwf_free(buf);
    }
    if (!impl_->plan) throw Error("FFTW could not plan a transform");
    fftw::savePlans();
}

template <class T>
FftPlan<T>::~FftPlan() {
    std::lock_guard<std::mutex> lock(fftw::plannerMutex());
    for (auto p : {impl_->plan, impl_->planes, impl_->planes_rest, impl_->lines, impl_->lines_rest}) Impl::destroy(p);
}

template <class T>
void FftPlan<T>::execute(std::complex<T>* data) const {
    using C = typename FftTraits<T>::cpx;
    auto* p = reinterpret_cast<C*>(data);
    if constexpr (std::is_same_v<T, double>)
        fftw_execute_dft(impl_->plan, p, p);
    else
        fftwf_execute_dft(impl_->plan, p, p);
}

template <class T>
void FftPlan<T>::execute(std::complex<T>* data, const Progress& progress) const {
    if (!progress.cancel || impl_->n.size() < 2 || size_ <= kBatchPoints) {
        execute(data);
        progress.check();
        return;
    }
    Impl& im = *impl_;
    std::call_once(im.batched_once, [&] { im.planBatches(size_); });
    const int slow = im.n[0];
    for (int z = 0; z < slow; z += im.planes_per_batch) {
        progress.check();
        Impl::run(z + im.planes_per_batch <= slow ? im.planes : im.planes_rest, data + std::size_t(z) * im.inner);
    }
    for (std::size_t l = 0; l < im.inner; l += std::size_t(im.lines_per_batch)) {
        progress.check();
        Impl::run(l + std::size_t(im.lines_per_batch) <= im.inner ? im.lines : im.lines_rest, data + l);
    }
    progress.check();
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace recon
