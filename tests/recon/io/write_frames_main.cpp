// write_ismrmrd_frames KIND FILE: the multi-frame ISMRMRD files of frames_files.hpp for the CLI's
// test (tests/app/test_cli_frames.py), with their truth as FILE_truth.cfl/.hdr: the magnitude,
// stacked as the CLI stacks its output (x, y, slices x partitions, contrasts x repetitions).
// KIND: slices (2 slices x 2 repetitions), slices-no-trajectory (the same, trajectory_dimensions 0,
// plus FILE_traj.cfl), stack (4 partitions of a stack of stars).
#include <cstdio>
#include <string>

#include "frames_files.hpp"
#include "recon/io/bart_cfl.hpp"

int main(int argc, char** argv) {
    using namespace recon;
    using namespace recon::test;
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s slices|slices-no-trajectory|stack FILE\n", argv[0]);
        return 2;
    }
    const std::string kind = argv[1], path = argv[2];
    std::vector<cfloat> truth;
    std::vector<long> dims;
    if (kind == "slices" || kind == "slices-no-trajectory") {
        const FramesTruth w = writeMultiSliceFile(path, kind == "slices");
        for (const auto& frame : w.truth)
            for (const auto& v : frame) truth.emplace_back(float(std::abs(v)), 0.0f);
        dims = {w.grid.n[0], w.grid.n[1], 2, 2};  // 2 slices along z, 2 repetitions
        if (kind != "slices") {
            std::vector<cfloat> k;
            for (double v : w.trajectory.k) k.emplace_back(float(v), 0.0f);
            io::writeCfl(path + "_traj", {3, kFramesReadout, kFramesSpokes}, k);
        }
    } else if (kind == "stack") {
        const StackTruth w = writeStackOfStarsFile(path);
        for (const auto& v : w.truth) truth.emplace_back(float(std::abs(v)), 0.0f);
        dims = {w.grid.n[0], w.grid.n[1], w.grid.n[2]};
    } else {
        std::fprintf(stderr, "unknown kind '%s'\n", kind.c_str());
        return 2;
    }
    io::writeCfl(path + "_truth", dims, truth);
    return 0;
}
