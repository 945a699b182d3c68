// Time to quality of the CT reconstructions (not a test: prints figures). For one demo case,
// optionally at another dose, FDK and any number of iterative runs through CtSession (the
// runner's records: PSNR and error against the truth per iteration, wall time):
//   ct_solver_bench --case ct-2d-lowdose [--photons 2000] [--iterations 60] [--every 10]
//                   [--backend cpu|cuda] fdk cg:fd:0.03 cg:tv:auto os-sart:10 ...
// A run is cg:PRIOR:LAMBDA (LAMBDA a number, or 'auto' / 'default' for the session's rules)
// or os-sart:SUBSETS[:RELAXATION].
#include <algorithm>
#include <cstdio>
#include <memory>
#include <cstdlib>
#include <string>
#include <vector>

#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"
#include "recon/ct/ct_data.hpp"
#include "recon/session/ct_session.hpp"

using namespace recon;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> parts;
    std::size_t at = 0;
    for (;;) {
        const std::size_t colon = s.find(':', at);
        parts.push_back(s.substr(at, colon - at));
        if (colon == std::string::npos) return parts;
        at = colon + 1;
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string case_name = "ct-2d-lowdose", backend_name = "cpu";
    double photons = -1;
    int iterations = 60, every = 10;
    std::vector<std::string> runs;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--case") case_name = next();
        else if (a == "--photons") photons = std::atof(next().c_str());
        else if (a == "--iterations") iterations = std::atoi(next().c_str());
        else if (a == "--every") every = std::max(1, std::atoi(next().c_str()));
        else if (a == "--backend") backend_name = next();
        else runs.push_back(a);
    }
    try {
        ct::CtCase c = ct::ctDemoCase(case_name);
        if (photons >= 0) c.photons = photons;
        auto data = std::make_shared<const ct::CtData>(ct::simulate(c));
        std::string note;
        std::shared_ptr<Backend> backend = createBackend(parseBackendChoice(backend_name), Precision::Single, &note);
        CtSession session(backend, data);
        double mean_count = 0;
        for (double n : data->counts) mean_count += n / double(data->counts.size());
        std::printf("%s, %g photons, mean count %.1f, %zu views; %s\n", case_name.c_str(), c.photons, mean_count,
                    data->geometry.beam.views(), backend->info().describe().c_str());
        const ComplexArray truth(data->truth.begin(), data->truth.end());
        Monitor monitor;
        for (const std::string& run : runs) {
            const std::vector<std::string> p = split(run);
            if (p[0] == "fdk") {
                const CtResult r = session.fdk({}, monitor);
                const Quality q = measureQuality(ComplexArray(r.image.begin(), r.image.end()), truth, false);
                std::printf("  %-22s %8.3f s %7.2f dB %7.2f %%\n", "fdk", r.seconds, q.psnr_db, q.error_percent);
                continue;
            }
            CtSolveOptions o;
            o.iterations = iterations;
            if (p[0] == "os-sart" && p.size() >= 2) {
                o.solver = CtSolver::OsSart;
                o.os_sart.subsets = std::atoi(p[1].c_str());
                if (p.size() >= 3) o.os_sart.sart.relaxation = std::atof(p[2].c_str());
            } else if (p[0] == "cg" && p.size() == 3) {
                o.iterative.prior = parseRegularizer(p[1]);
                o.iterative.auto_lambda = p[2] == "auto";
                o.iterative.lambda = p[2] == "default" ? ct::defaultLambda(o.iterative.prior) : std::atof(p[2].c_str());
            } else {
                std::fprintf(stderr, "unknown run '%s' (fdk, cg:PRIOR:LAMBDA, os-sart:SUBSETS[:RELAXATION])\n", run.c_str());
                return 2;
            }
            const CtResult r = session.solve(o, monitor);
            std::printf("  %-22s %s\n", run.c_str(), r.description.c_str());
            for (const IterationRecord& rec : r.history)
                if (rec.iteration % every == 0 || &rec == &r.history.back())
                    std::printf("  %-22s %8.3f s %7.2f dB %7.2f %%   iteration %d\n", run.c_str(), rec.seconds,
                                rec.psnr_db, rec.error_percent, rec.iteration);
            std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ct_solver_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
