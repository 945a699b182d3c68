// Benchmark rows for the branchless DD projector (issue 18): the GPU's projection and
// backprojection, texture and software interpolation, kernel-only (device arrays) and
// whole calls (host arrays in and out), against the CPU branchless DD on one thread and
// on all cores; each GPU row with its error against the CPU (float64 inside) and its
// adjoint mismatch. Prints rows; not a test.
//
//   ct_dd_bench [--sizes 256,512] [--cpu-views N] [--repeat R] [--interp both|texture|software] [--no-cpu-timing]
//
// --no-cpu-timing skips the CPU's timed runs (minutes at 512^3 on one thread); the CPU still
// projects the subset on all cores, for the GPU's errors.
//
// The CPU runs one view and `--cpu-views` views spread over the scan (a full scan on one
// CPU thread takes many minutes): their difference gives its seconds per view, the rest is
// the fixed cost (the integral images), and a whole scan is fixed + views x per view. The
// GPU's errors are measured on the same subset.
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "recon/ct/dd_branchless_cpu.hpp"
#include "recon/cuda/ct_dd.hpp"
#include "recon/cuda/cuda_util.hpp"

using namespace recon;
using recon::ct::CtGeometry;
using recon::ct::DdInterpolation;

namespace {

struct Size {
    int n, views, columns, rows;
    double voxel_mm, pixel_mm;
    double astra_fp_s, astra_bp_s;  // ASTRA 2.5.0 on one H100, whole calls (docs/CT_PROJECTOR.md; not this run)
};

CtGeometry clinical(const Size& s, int views) {
    CtGeometry g;
    g.volume.size = {s.n, s.n, s.n};
    g.volume.voxel_mm = {s.voxel_mm, s.voxel_mm, s.voxel_mm};
    g.beam.source_to_isocentre_mm = 600.0;
    g.beam.source_to_detector_mm = 1000.0;
    g.beam.detector_columns = s.columns;
    g.beam.detector_rows = s.rows;
    g.beam.pixel_u_mm = s.pixel_mm;
    g.beam.pixel_v_mm = s.pixel_mm;
    g.beam.angles_rad = ct::fullScanAngles(views, 0.0);
    return g;
}

// A head-sized object: a water ball with denser ellipsoidal inserts and a gentle ramp (1/mm).
std::vector<float> object(const CtGeometry& g) {
    const auto& v = g.volume;
    std::vector<float> f(v.voxels());
    const double r = 0.45 * v.size[0] * v.voxel_mm[0];
#pragma omp parallel for
    for (int k = 0; k < v.size[2]; ++k)
        for (int j = 0; j < v.size[1]; ++j)
            for (int i = 0; i < v.size[0]; ++i) {
                const double x = v.centre(0, i) / r, y = v.centre(1, j) / r, z = v.centre(2, k) / r;
                double mu = 0.0;
                if (x * x + y * y + z * z < 1.0) mu = 0.019 + 0.002 * x;
                if ((x - 0.3) * (x - 0.3) / 0.04 + y * y / 0.09 + z * z / 0.16 < 1.0) mu += 0.01;
                if ((x + 0.35) * (x + 0.35) / 0.02 + (y - 0.2) * (y - 0.2) / 0.02 + z * z / 0.3 < 1.0) mu -= 0.005;
                f[std::size_t(i) + std::size_t(v.size[0]) * (j + std::size_t(v.size[1]) * k)] = float(mu);
            }
    return f;
}

std::vector<float> randomValues(std::size_t n, unsigned seed) {
    std::vector<float> v(n);
#pragma omp parallel
    {
        std::mt19937 rng(seed + 7919u * unsigned(omp_get_thread_num()));
        std::uniform_real_distribution<float> d(0.0f, 1.0f);
#pragma omp for
        for (std::int64_t k = 0; k < std::int64_t(n); ++k) v[std::size_t(k)] = d(rng);
    }
    return v;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double seconds(const std::function<void()>& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median over `repeat` runs of a device call, timed by events on the projector's stream.
double deviceSeconds(cuda::CudaDdProjector& p, int repeat, const std::function<void()>& f) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<double> t;
    for (int r = 0; r < repeat; ++r) {
        cudaEventRecord(a, p.stream());
        f();
        cudaEventRecord(b, p.stream());
        cuda::check(cudaEventSynchronize(b), "benchmark timing");
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1e-3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return median(t);
}

struct Errors {
    double max_rel, rms_rel;
};
Errors compare(const std::vector<float>& got, const std::vector<float>& ref) {
    double peak = 0, worst = 0, e2 = 0, r2 = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) {
        const double e = double(got[k]) - ref[k];
        peak = std::max(peak, std::abs(double(ref[k])));
        worst = std::max(worst, std::abs(e));
        e2 += e * e;
        r2 += double(ref[k]) * ref[k];
    }
    return {worst / peak, std::sqrt(e2 / r2)};
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (std::int64_t k = 0; k < std::int64_t(a.size()); ++k) s += double(a[std::size_t(k)]) * b[std::size_t(k)];
    return s;
}

struct Options {
    int cpu_views = 8, repeat = 3;
    bool texture = true, software = true, cpu_timing = true;
};

// What a whole call's transfers cost by themselves: one copy each way of the arrays, pageable
// (the caller's) and page-locked, and a host copy on the threads the host calls use.
void transferRow(std::size_t voxels, std::size_t samples) {
    const std::size_t n = std::max(voxels, samples);
    std::vector<float> host(n, 1.0f), host2(n, 2.0f);
    cuda::DeviceBuffer<float> dev(n, "benchmark transfers");
    float* pinned = nullptr;
    cuda::check(cudaHostAlloc(&pinned, std::size_t(256) << 20, cudaHostAllocDefault), "benchmark pinned buffer");
    const std::size_t pn = (std::size_t(256) << 20) / sizeof(float);
    auto gbps = [](std::size_t floats, double s) { return double(floats) * sizeof(float) / s * 1e-9; };
    const double h2d_vol = seconds([&] { cuda::check(cudaMemcpy(dev.data(), host.data(), voxels * 4, cudaMemcpyHostToDevice), "h2d"); });
    const double d2h_proj = seconds([&] { cuda::check(cudaMemcpy(host.data(), dev.data(), samples * 4, cudaMemcpyDeviceToHost), "d2h"); });
    const double h2d_pin = seconds([&] { cuda::check(cudaMemcpy(dev.data(), pinned, pn * 4, cudaMemcpyHostToDevice), "h2d"); });
    const double d2h_pin = seconds([&] { cuda::check(cudaMemcpy(pinned, dev.data(), pn * 4, cudaMemcpyDeviceToHost), "d2h"); });
    const double host_copy = seconds([&] {
#pragma omp parallel for num_threads(8)
        for (std::int64_t b = 0; b < std::int64_t(n >> 20); ++b)
            std::memcpy(host2.data() + (std::size_t(b) << 20), host.data() + (std::size_t(b) << 20), std::size_t(4) << 20);
    });
    cudaFreeHost(pinned);
    std::printf("transfers: volume H2D pageable %.1f ms (%.1f GB/s), projections D2H pageable %.1f ms (%.1f GB/s); "
                "page-locked H2D %.1f GB/s, D2H %.1f GB/s; host memcpy on 8 threads %.1f GB/s\n",
                h2d_vol * 1e3, gbps(voxels, h2d_vol), d2h_proj * 1e3, gbps(samples, d2h_proj), gbps(pn, h2d_pin),
                gbps(pn, d2h_pin), gbps((n >> 20) << 20, host_copy));
}

void run(const Size& s, const Options& o) {
    const int cpu_views = o.cpu_views, repeat = o.repeat;
    const CtGeometry full = clinical(s, s.views);
    // The CPU's subset: every (views / cpu_views)-th view of the same scan.
    CtGeometry subset = full;
    subset.beam.angles_rad.clear();
    for (int k = 0; k < cpu_views; ++k) subset.beam.angles_rad.push_back(full.beam.angles_rad[std::size_t(k) * s.views / cpu_views]);
    const int cores = omp_get_max_threads();
    std::printf("\n== %d^3 volume (%.2f mm voxels), %d views, %dx%d detector (%.2f mm), D_so 600 mm, D_sd 1000 mm; "
                "CPU on %d of the views, %d cores ==\n",
                s.n, s.voxel_mm, s.views, s.columns, s.rows, s.pixel_mm, cpu_views, cores);
    const std::vector<float> x = object(full);

    // Seconds per scan = fixed (the integral images) + views x per view, from runs on 1 view and on the subset.
    CtGeometry one = subset;
    one.beam.angles_rad.resize(1);
    ct::BranchlessDdCpu cpu(subset), cpu_one(one);
    std::vector<float> p_cpu(cpu.samples()), b_cpu(cpu.voxels()), scratch_p(cpu.samples()), scratch_b(cpu.voxels());
    struct PerScan {
        double fixed, per_view;
        double scan(int views) const { return fixed + per_view * views; }
    };
    auto perScan = [&](double t_one, double t_subset) {
        const double per_view = cpu_views > 1 ? (t_subset - t_one) / (cpu_views - 1) : t_subset;
        return PerScan{std::max(0.0, t_one - per_view), per_view};
    };
    PerScan fp1{}, bp1{}, fpn{}, bpn{};
    if (o.cpu_timing) {
        fp1 = perScan(seconds([&] { cpu_one.project(x.data(), scratch_p.data(), 1); }),
                      seconds([&] { cpu.project(x.data(), p_cpu.data(), 1); }));
        bp1 = perScan(seconds([&] { cpu_one.backproject(p_cpu.data(), scratch_b.data(), 1); }),
                      seconds([&] { cpu.backproject(p_cpu.data(), b_cpu.data(), 1); }));
        fpn = perScan(seconds([&] { cpu_one.project(x.data(), scratch_p.data(), 0); }),
                      seconds([&] { cpu.project(x.data(), scratch_p.data(), 0); }));
        bpn = perScan(seconds([&] { cpu_one.backproject(p_cpu.data(), scratch_b.data(), 0); }),
                      seconds([&] { cpu.backproject(p_cpu.data(), scratch_b.data(), 0); }));
        for (int pass = 0; pass < 2; ++pass) {
            const PerScan& f = pass ? fpn : fp1;
            const PerScan& b = pass ? bpn : bp1;
            std::printf("cpu branchless %2d thread(s): projection %.3f s + %.3f s/view = %.1f s per scan; "
                        "backprojection %.3f s + %.3f s/view = %.1f s per scan\n",
                        pass ? cores : 1, f.fixed, f.per_view, f.scan(s.views), b.fixed, b.per_view, b.scan(s.views));
        }
    } else {
        cpu.project(x.data(), p_cpu.data(), 0);  // the reference for the GPU's errors only (same bits as one thread)
        cpu.backproject(p_cpu.data(), b_cpu.data(), 0);
    }
    transferRow(full.volume.voxels(), std::size_t(s.views) * s.columns * s.rows);

    const double voxel_views = double(full.volume.voxels()) * s.views;
    std::printf("%-8s %-4s %10s %10s %9s %10s %10s %10s %10s %10s %10s %10s\n", "interp", "dir", "kernel_ms", "whole_ms",
                "Gvv/s", "x_cpu1", "x_cpu_all", "x_astra", "err_max", "err_rms", "adj_mism", "");
    // The chip's rates: 4 texture units per SM, one filtered fetch per clock each; a large
    // device-to-device copy (bytes read + written).
    int sms = 0, khz = 0, device = 0;
    cuda::check(cudaGetDevice(&device), "device");
    cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "device");
    cuda::check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device), "device");
    const double fetch_rate = 4.0 * sms * khz * 1e3;
    double copy_rate = 0;
    {
        const std::size_t n = std::size_t(1) << 28;
        cuda::DeviceBuffer<float> a(n, "copy rate"), b(n, "copy rate");
        cuda::check(cudaMemset(a.data(), 0, n * 4), "copy rate");
        cuda::check(cudaMemcpy(b.data(), a.data(), n * 4, cudaMemcpyDeviceToDevice), "copy rate");
        cuda::check(cudaDeviceSynchronize(), "copy rate");
        const double t = seconds([&] {
            cuda::check(cudaMemcpy(b.data(), a.data(), n * 4, cudaMemcpyDeviceToDevice), "copy rate");
            cuda::check(cudaDeviceSynchronize(), "copy rate");
        });
        copy_rate = 2.0 * n * 4 / t;
    }
    for (DdInterpolation interp : {DdInterpolation::Hardware, DdInterpolation::Software}) {
        if (!(interp == DdInterpolation::Hardware ? o.texture : o.software)) continue;
        const char* name = interp == DdInterpolation::Hardware ? "texture" : "software";
        // Errors against the CPU on the subset.
        cuda::CudaDdProjector sub(subset, interp);
        std::vector<float> p_gpu(sub.samples()), b_gpu(sub.voxels());
        sub.projectHost(x.data(), p_gpu.data());
        sub.backprojectHost(p_cpu.data(), b_gpu.data());
        const Errors efp = compare(p_gpu, p_cpu), ebp = compare(b_gpu, b_cpu);

        cuda::CudaDdProjector gpu(full, interp);
        cuda::DeviceBuffer<float> vol(gpu.voxels(), "benchmark volume"), proj(gpu.samples(), "benchmark projections"),
            back(gpu.voxels(), "benchmark backprojection");
        vol.upload(x.data(), x.size());
        gpu.project(vol.data(), proj.data());  // warm-up
        gpu.backproject(proj.data(), back.data());
        cuda::check(cudaDeviceSynchronize(), "warm-up");
        const double kfp = deviceSeconds(gpu, repeat, [&] { gpu.project(vol.data(), proj.data()); });
        const double kbp = deviceSeconds(gpu, repeat, [&] { gpu.backproject(proj.data(), back.data()); });
        std::vector<float> p_full(gpu.samples()), b_full(gpu.voxels());
        std::vector<double> wf, wb;
        for (int r = 0; r < repeat; ++r) {
            wf.push_back(seconds([&] { gpu.projectHost(x.data(), p_full.data()); }));
            wb.push_back(seconds([&] { gpu.backprojectHost(p_full.data(), b_full.data()); }));
        }
        const double whole_fp = median(wf), whole_bp = median(wb);
        // Adjoint mismatch on the whole scan, random vectors.
        const auto rx = randomValues(gpu.voxels(), 1), ry = randomValues(gpu.samples(), 2);
        gpu.projectHost(rx.data(), p_full.data());
        gpu.backprojectHost(ry.data(), b_full.data());
        const double lhs = dot(p_full, ry), rhs = dot(rx, b_full);
        const double mismatch = std::abs(lhs - rhs) / std::abs(lhs);
        auto row = [&](const char* dir, double k, double w, double cpu1, double cpun, double astra, const Errors& e) {
            char x_cpu1[16] = "-", x_cpun[16] = "-";  // without the CPU's timed runs
            if (o.cpu_timing) {
                std::snprintf(x_cpu1, sizeof x_cpu1, "%.0fx", cpu1 / w);
                std::snprintf(x_cpun, sizeof x_cpun, "%.1fx", cpun / w);
            }
            std::printf("%-8s %-4s %10.1f %10.1f %9.1f %10s %10s %9.1fx %10.2e %10.2e %10.2e\n", name, dir, k * 1e3,
                        w * 1e3, voxel_views / k * 1e-9, x_cpu1, x_cpun, astra / w, e.max_rel, e.rms_rel, mismatch);
        };
        row("FP", kfp, whole_fp, fp1.scan(s.views), fpn.scan(s.views), s.astra_fp_s, efp);
        row("BP", kbp, whole_bp, bp1.scan(s.views), bpn.scan(s.views), s.astra_bp_s, ebp);
        // Against the chip's limits: the projection's bilinear samples (2 (n_v + 1) per column and
        // slice, rows sharing their boundaries) over the texture units' filtered-fetch rate, and
        // the bytes each kernel must move (read its input once, write its output once; the
        // projection also the integral images) over a device-to-device copy's rate.
        const double samples = 2.0 * (s.rows + 1) * s.columns * double(s.n) * s.views;
        const double fp_bytes = 4.0 * (double(gpu.voxels()) * 3 + double(gpu.samples()));
        const double bp_bytes = 4.0 * (double(gpu.samples()) * 3 + double(gpu.voxels()));
        std::printf("%-8s      limits: FP %.0f G bilinear samples/s = %.0f%% of %.0f G texture fetches/s; device memory "
                    "FP %.1f%%, BP %.1f%% of %.0f GB/s\n",
                    name, samples / kfp * 1e-9, 100.0 * samples / kfp / fetch_rate, fetch_rate * 1e-9,
                    100.0 * fp_bytes / kfp / copy_rate, 100.0 * bp_bytes / kbp / copy_rate, copy_rate * 1e-9);
        if (o.cpu_timing) std::printf("%-8s      kernel-only speed-up vs CPU 1 thread: FP %.0fx, BP %.0fx; vs %d threads: FP %.1fx, BP %.1fx\n",
                    name, fp1.scan(s.views) / kfp, bp1.scan(s.views) / kbp, cores, fpn.scan(s.views) / kfp,
                    bpn.scan(s.views) / kbp);
    }
    std::printf("(x_cpu1, x_cpu_all: whole GPU call vs the CPU's seconds per scan of %d views; x_astra: vs\n"
                " ASTRA 2.5.0's whole calls on one H100, %.3f s FP and %.3f s BP (docs/CT_PROJECTOR.md; not this run);\n"
                " err: GPU vs CPU (float64 inside) on the CPU's views, relative to the largest value / rms; Gvv/s: 1e9\n"
                " voxel-views per second, kernel-only)\n",
                s.views, s.astra_fp_s, s.astra_bp_s);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> sizes{256};
    Options o;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg == "--sizes" && a + 1 < argc) {
            sizes.clear();
            std::string list = argv[++a];
            for (std::size_t p = 0; p < list.size();) {
                const std::size_t q = std::min(list.find(',', p), list.size());
                sizes.push_back(std::stoi(list.substr(p, q - p)));
                p = q + 1;
            }
        } else if (arg == "--cpu-views" && a + 1 < argc) {
            o.cpu_views = std::max(1, std::stoi(argv[++a]));
        } else if (arg == "--repeat" && a + 1 < argc) {
            o.repeat = std::max(1, std::stoi(argv[++a]));
        } else if (arg == "--interp" && a + 1 < argc) {
            const std::string which = argv[++a];
            o.texture = which != "software";
            o.software = which != "texture";
        } else if (arg == "--no-cpu-timing") {
            o.cpu_timing = false;
        } else {
            std::printf("usage: ct_dd_bench [--sizes 256,512] [--cpu-views N] [--repeat R] [--interp both|texture|software] "
                        "[--no-cpu-timing]\n");
            return arg == "--help" ? 0 : 2;
        }
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows reach a pipe as they are printed
    if (cuda::deviceCount() == 0) {
        std::printf("ct_dd_bench: no CUDA device\n");
        return 77;
    }
    std::printf("%s\n", cuda::deviceProps(0).describe().c_str());
    for (int n : sizes) {
        if (n == 256) run({256, 360, 512, 384, 1.0, 1.6, 1.080, 0.468}, o);
        else if (n == 512) run({512, 720, 1024, 768, 0.5, 0.8, 9.49, 3.81}, o);
        else if (n >= 16) run({n, 360, 2 * n, 3 * n / 2, 256.0 / n, 1.6 * 256.0 / n, 0.0, 0.0}, o);
    }
    return 0;
}
