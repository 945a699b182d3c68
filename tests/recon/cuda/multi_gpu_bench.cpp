// Benchmark rows of the work split over several devices (issue 20; not a test: prints figures).
//   multi_gpu_bench [--sizes 128,256] [--coils 8,32] [--devices LIST] [--iterations 60] [--no-multi] [--before-cg]
// --before-cg: instead of the SENSE rows, what comes before CG piece by piece (Q, the maps, E^H d on
// one device and split over two, the kernel's copy by peer and through the host).
// LIST: the devices of the largest row; rows run on its first 1, 2, ... entries. Default: every
// visible GPU when there are several, else 0,0,0,0 (four logical devices of GPU 0, each a
// backend on a stream of its own). On one GPU the logical devices share its SMs, so the
// speed-up cannot exceed 1: the rows then show what the split costs (copies, the sum on the
// home device, threads), not what several GPUs gain. The same command on a machine with
// several GPUs gives the real rows.
//  - SENSE: the paper's 3D radial case (M = 284,592 per coil at 128^3, scaled as N^3), synthetic
//    smooth coil maps, data from the GPU NUFFT; whole reconstruction as the session runs it
//    (F^H d per coil, on the devices that own the coils when split; Q; the other devices' kernel
//    copies, device to device; 60 CG iterations; image to host), what came before CG, the CG loop
//    alone, and the communication per CG iteration (the slowest device's copies + the sum).
//  - GPU.Multi: F^H d of the 128^3 case with the voxels split (host arrays in and out), the
//    paper's GPU.Tune kernel and exact-fast; and the GPU NUFFT's F^H d on one device beside
//    its host transfers alone, the most a split of it could save.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "recon/backend/backend.hpp"
#include "tests/recon/cuda/bench_data.hpp"
#include "recon/cuda/cuda_backend.hpp"
#include "recon/linop/distributed_stack.hpp"
#include "recon/operators/regularizer.hpp"
#include "recon/phantom/shepp_logan.hpp"
#include "recon/sense/sense_operator.hpp"
#include "recon/session/reconstruction.hpp"
#include "recon/trajectory/trajectories.hpp"

using namespace recon;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<int> parseList(const std::string& s) {
    std::vector<int> v;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::stoi(item));
    return v;
}

double relDiff(const ComplexArray& a, const ComplexArray& b) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        num += std::norm(a[i] - b[i]);
        den += std::norm(b[i]);
    }
    return den > 0 ? std::sqrt(num / den) : 0;
}

std::shared_ptr<Backend> cudaBackend(int device) {
    std::string why;
    std::shared_ptr<Backend> b = createCudaBackend(Precision::Single, device, &why);
    if (!b) throw Error("GPU " + std::to_string(device) + ": " + why);
    return b;
}

// Devices for a row: the first `n` of `list`; the first entry is `home`.
std::vector<SplitDevice> devicesFor(const std::shared_ptr<Backend>& home, const std::vector<int>& list, std::size_t n) {
    std::vector<SplitDevice> d{{home, "GPU " + std::to_string(list[0])}};
    for (std::size_t i = 1; i < n; ++i) d.push_back({cudaBackend(list[i]), "GPU " + std::to_string(list[i])});
    return d;
}

std::string describe(const std::vector<int>& list, std::size_t n) {
    std::string s = "{";
    for (std::size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(list[i]);
    return s + "}";
}

// What comes before CG in the rows, piece by piece, on list[0] and (split) list[0..1]; each timed
// after a warm-up of the same piece where the session's backend would have it cached.
void senseBeforeCg(const std::shared_ptr<Backend>& home, const std::vector<int>& list, const Dataset& data,
                   const CoilMaps& maps, const FourierMethod& method) {
    const Grid& grid = data.grid;
    const Trajectory& traj = data.trajectory;
    const std::vector<double> phi(traj.samples(), 1.0);  // point basis
    home->makeToeplitz(grid, traj, phi, method);  // its NUFFT plan, cached as in the rows
    auto t0 = Clock::now();
    const auto kernel = home->makeToeplitz(grid, traj, phi, method);
    const double q = since(t0);
    const auto fourierOn = [&](Backend& b) {
        return fourierOperator(b, traj, grid, phi, method, &b == home.get() ? kernel : b.toeplitzCopy(*kernel));
    };
    // One device: the maps uploaded, then F^H d per coil and the sum (the session's unsplit path).
    t0 = Clock::now();
    const SenseOperator whole(fourierOn(*home), maps.maps);
    const double maps_one = since(t0);
    t0 = Clock::now();
    {
        std::vector<std::shared_ptr<const Vector>> coil;
        std::vector<const Vector*> ptrs;
        for (int c = 0; c < data.coils; ++c) {
            const ComplexArray d(data.coil(c), data.coil(c) + traj.samples());
            coil.push_back(home->adjointOnBackend(traj, d, SampleGrid::image(grid), method));
            ptrs.push_back(coil.back().get());
        }
        senseAdjointFromCoilImages(*home, ptrs, maps.maps);
        home->synchronize();
    }
    const double rhs_one = since(t0);
    // The rows' prior (finite differences): W and W^T W made on the host, uploaded.
    t0 = Clock::now();
    {
        const Regularizer reg = makeRegularizer(RegularizerKind::FiniteDifference, grid);
        sparseMatrix(*home, reg.w, &reg.normal);
        home->synchronize();
    }
    const double w = since(t0);
    std::printf("  before CG, 1 device:  Q %6.3f s  maps to the device %6.3f s  E^H d (F^H d per coil) %6.3f s  W %6.3f s\n", q,
                maps_one, rhs_one, w);
    if (list.size() < 2) return;
    std::shared_ptr<Backend> other = cudaBackend(list[1]);
    other->toeplitzCopy(*kernel);  // the context's first allocations
    t0 = Clock::now();
    other->toeplitzCopy(*kernel);
    const double peer = since(t0);
    t0 = Clock::now();
    other->toeplitzFromQ(grid, kernel->q());
    const double via_host = since(t0);
    t0 = Clock::now();
    const LinearOperatorPtr split = splitSense(*home, devicesFor(home, list, 2), maps.maps, grid.voxels(), fourierOn);
    const double maps_split = since(t0);
    Vector rhs = home->make(grid.voxels());
    t0 = Clock::now();
    dynamic_cast<const DistributedStack&>(*split).adjointFromHost({data.coil(0), split->outSize()}, rhs);
    const double rhs_split = since(t0);
    std::printf("  before CG, 2 devices: kernel to the other device: peer copy %6.3f s (through Q and the host %6.3f s)"
                "  maps + kernel copies %6.3f s  E^H d split %6.3f s\n",
                peer, via_host, maps_split, rhs_split);
    std::fflush(stdout);
}

void senseRows(int n, const std::vector<int>& coil_counts, const std::vector<int>& list, int iterations, bool pieces) {
    const Grid grid = Grid::cube(3, n);
    const Trajectory traj = paperTrajectory(n);
    const ComplexArray truth = Phantom::sheppLogan3D().image(grid, 2);
    std::shared_ptr<Backend> home = cudaBackend(list[0]);
    const FourierMethod nufft{"nufft", 1e-6};
    for (int coils : coil_counts) {
        std::fprintf(stderr, "SENSE %d^3, %d coils: data...\n", n, coils);
        auto data = std::make_shared<Dataset>();
        data->name = "bench";
        data->grid = grid;
        data->trajectory = traj;
        data->coils = coils;
        data->basis = BasisFunction::Point;
        data->truth = truth;
        CoilMaps maps;
        maps.maps = ringMaps(grid, coils);
        maps.coils = coils;
        maps.mask.assign(grid.voxels(), 1);
        maps.source = "ring of Gaussian bumps";
        data->kspace.resize(std::size_t(coils) * traj.samples());
        for (int c = 0; c < coils; ++c) {
            ComplexArray weighted(grid.voxels()), out;
            for (std::size_t i = 0; i < weighted.size(); ++i) weighted[i] = maps.maps[std::size_t(c) * grid.voxels() + i] * truth[i];
            home->forwardSum(traj, weighted, SampleGrid::image(grid), out, nufft);
            std::copy(out.begin(), out.end(), data->kspace.begin() + std::ptrdiff_t(std::size_t(c) * traj.samples()));
        }
        SolveOptions o;
        o.iterations = iterations;
        o.lambda = 0.02;
        o.snapshot_every = 0;
        o.method = {"nufft", kDefaultNufftTolerance};
        o.coil_combination = CoilCombination::Sense;
        if (pieces) {
            std::printf("SENSE %4d^3 %3d coils, what comes before CG:\n", n, coils);
            senseBeforeCg(home, list, *data, maps, o.method);
            continue;
        }
        double t1 = 0;
        ComplexArray image1;
        for (std::size_t d = 0; d <= list.size(); ++d) {
            const std::size_t devices = std::max<std::size_t>(d, 1);  // d = 0: an untimed warm-up on one device
            ReconstructionSession session(home);
            session.setDataset(data);
            session.setCoilMaps(maps);
            session.setSenseDevices(devicesFor(home, list, devices));
            const auto t0 = Clock::now();
            const SolveResult r = session.solve(o);
            const double whole = since(t0);
            if (d == 0) continue;
            if (d == 1) {
                t1 = whole;
                image1 = r.complex_image;
            }
            const double speedup = t1 / whole;
            std::printf("SENSE %4d^3 %3d coils  %-10s  whole %8.3f s  before CG %7.3f s  CG %8.3f s (%6.2f ms/it)"
                        "  comm/it %7.3f ms (%4.1f %% of an it)  speed-up %5.2f  efficiency %5.2f  image vs 1 device %.1e\n",
                        n, coils, describe(list, devices).c_str(), whole, whole - r.seconds, r.seconds, 1e3 * r.seconds / iterations,
                        1e3 * r.communication_seconds, 100 * r.communication_seconds / (r.seconds / iterations), speedup,
                        speedup / double(devices), relDiff(r.complex_image, image1));
            std::fflush(stdout);
        }
    }
}

void multiRows(const std::vector<int>& list) {
    const int n = 128;
    const Grid grid = Grid::cube(3, n);
    Trajectory traj = radial3D(n, 2541, 112);
    traj.k.resize(3 * std::size_t(284592));
    const ComplexArray data = Phantom::sheppLogan3D().kspace(traj, grid);
    const std::vector<std::complex<float>> c(data.begin(), data.end());
    const SampleGrid sg = SampleGrid::image(grid);
    for (const cuda::DirectVersion version : {cuda::DirectVersion::Tune, cuda::DirectVersion::ExactFast}) {
        const char* kernel = version == cuda::DirectVersion::Tune ? "GPU.Tune" : "exact-fast";
        double t1 = 0;
        std::vector<std::complex<float>> one;
        for (std::size_t d = 1; d <= list.size(); ++d) {
            const std::vector<int> devices(list.begin(), list.begin() + std::ptrdiff_t(d));
            std::vector<std::complex<float>> out;
            cuda::multiGpuAdjoint<float>(traj, c, sg, out, devices, {}, version);  // contexts, tuning cache
            const auto t0 = Clock::now();
            cuda::multiGpuAdjoint<float>(traj, c, sg, out, devices, {}, version);
            const double s = since(t0);
            if (d == 1) {
                t1 = s;
                one = out;
            }
            const ComplexArray a(out.begin(), out.end()), b(one.begin(), one.end());
            std::printf("GPU.Multi (%-10s) F^H d 128^3 M=284592  %-10s  %8.3f s  speed-up %5.2f  efficiency %5.2f  vs 1 device %.1e\n",
                        kernel, describe(list, d).c_str(), s, t1 / s, t1 / s / double(d), relDiff(a, b));
            std::fflush(stdout);
        }
    }
    // The NUFFT on one device (plan cached, second call) against its host transfers alone (the
    // samples up, the image down): a split of its spreading and FFT could save at most the difference.
    std::shared_ptr<Backend> home = cudaBackend(list[0]);
    const FourierMethod nufft{"nufft", kDefaultNufftTolerance};
    ComplexArray image;
    home->adjointSum(traj, data, sg, image, nufft);
    auto t0 = Clock::now();
    home->adjointSum(traj, data, sg, image, nufft);
    const double whole = since(t0);
    Vector samples = home->make(data.size()), grid_image = home->make(image.size());
    home->upload(data, samples);
    t0 = Clock::now();
    home->upload(data, samples);
    home->download(grid_image, image);
    const double transfers = since(t0);
    std::printf("GPU NUFFT (%g) F^H d 128^3 M=284592  {%d}  %8.4f s, of which host transfers %8.4f s\n", nufft.tolerance,
                list[0], whole, transfers);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<int> sizes{128}, coils{8, 32}, list;
        int iterations = 60;
        bool multi = true, pieces = false;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw InputError(a + " needs a value");
                return argv[++i];
            };
            if (a == "--sizes") sizes = parseList(value());
            else if (a == "--coils") coils = parseList(value());
            else if (a == "--devices") list = parseList(value());
            else if (a == "--iterations") iterations = std::stoi(value());
            else if (a == "--no-multi") multi = false;
            else if (a == "--before-cg") pieces = true;
            else throw InputError("unknown option " + a + " (--sizes, --coils, --devices, --iterations, --no-multi, --before-cg)");
        }
        const int visible = cudaDeviceCount();
        if (visible == 0) {
            std::printf("no GPU: nothing to measure\n");
            return 0;
        }
        if (list.empty()) {
            for (int d = 0; d < visible; ++d) list.push_back(d);
            if (visible == 1) list = {0, 0, 0, 0};
        }
        for (int d : list)
            if (d < 0 || d >= visible) throw InputError("--devices: GPU " + std::to_string(d) + " does not exist");
        std::printf("%s; devices %s%s\n", cudaBackend(0)->info().describe().c_str(), describe(list, list.size()).c_str(),
                    std::count(list.begin(), list.end(), list[0]) > 1
                        ? " (repeated: logical devices sharing one GPU; speed-up <= 1 shows the split's overhead)"
                        : "");
        for (int n : sizes) senseRows(n, coils, list, iterations, pieces);
        if (multi) multiRows(list);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "multi_gpu_bench: %s\n", e.what());
        return 1;
    }
}
