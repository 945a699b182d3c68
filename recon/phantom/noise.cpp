#include <cmath>
#include <random>

#include "recon/phantom/shepp_logan.hpp"

namespace recon {

void addNoise(ComplexArray& data, double snr_db, std::uint64_t seed) {
    if (data.empty()) return;
    double power = 0;
    for (const auto& v : data) power += std::norm(v);
    power /= double(data.size());
    const double sigma2 = power / std::pow(10.0, snr_db / 10.0);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, std::sqrt(sigma2 / 2));  // per component: E|z|^2 = sigma2
    for (auto& v : data) v += cdouble(normal(rng), normal(rng));
}

}  // namespace recon
