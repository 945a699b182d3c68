#include "recon/cuda/direct_sums.hpp"

namespace recon::cuda {

std::string toString(DirectVersion v) {
    switch (v) {
        case DirectVersion::Base: return "base";
        case DirectVersion::RegAlloc: return "regalloc";
        case DirectVersion::Coalesce: return "coalesce";
        case DirectVersion::ConstMem: return "constmem";
        case DirectVersion::FastTrig: return "fasttrig";
        case DirectVersion::Tune: return "tune";
        case DirectVersion::ExactFast: return "exact-fast";
    }
    return "?";
}

bool usesHardwareTrig(DirectVersion v) {
    return v == DirectVersion::FastTrig || v == DirectVersion::Tune || v == DirectVersion::ExactFast;
}

double paperFlopsPerPair(DirectVersion v) { return usesHardwareTrig(v) ? 15.0 : 38.0; }

std::string TuneParams::describe() const {
    return std::to_string(threads) + " threads/block, tile " + std::to_string(tile) + (shared ? " (shared)" : " (constant)") +
           ", unroll " + std::to_string(unroll) + (voxels > 1 ? ", " + std::to_string(voxels) + " voxels/thread" : "");
}

int maxConstantTile(bool double_precision) { return double_precision ? 1024 : 2048; }
int maxSharedTile(bool double_precision) { return double_precision ? 512 : 1024; }

}  // namespace recon::cuda
