#include "ct_commands.hpp"

#include <chrono>
#include <cstdio>
#include <sstream>

#include "arguments.hpp"
#include "json_text.hpp"
#include "recon/backend/backend.hpp"
#include "recon/core/metrics.hpp"
#include "recon/core/version.hpp"
#include "recon/ct/ct_file.hpp"
#include "recon/ct/phantom.hpp"
#include "recon/io/dataset_io.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/output_guard.hpp"
#include "recon/nufft/fft.hpp"
#include "recon/session/ct_session.hpp"

namespace recon::cli {
namespace {

// "256x256" or "64x64x64" (at most 3 sizes, each 1..limit); `count` sizes exactly when given.
std::vector<int> parseSizes(const std::string& option, const std::string& s, int limit, std::size_t min_count,
                            std::size_t max_count) {
    std::vector<int> out;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, 'x')) {
        if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos)
            throw UsageError("--" + option + " expects sizes like 256x256, got '" + s + "'");
        out.push_back(std::stoi(part));
        if (out.back() < 1 || out.back() > limit)
            throw UsageError("--" + option + " sizes must be between 1 and " + std::to_string(limit) + ", got '" + s + "'");
    }
    if (out.size() < min_count || out.size() > max_count)
        throw UsageError("--" + option + " expects " + std::to_string(min_count) +
                         (max_count > min_count ? " or " + std::to_string(max_count) : std::string()) + " sizes, got '" + s + "'");
    return out;
}

const std::set<std::string> kCtDataOptions = {"case", "input"};
const std::set<std::string> kCtSolveOptions = {"lambda", "regularizer", "iterations", "tolerance", "window", "precision",
                                               "backend", "threads", "ct-solver", "subsets", "relaxation"};
const std::set<std::string> kCtSolveFlags = {"unweighted", "quiet"};

std::set<std::string> with(std::set<std::string> a, std::initializer_list<std::string> more) {
    a.insert(more.begin(), more.end());
    return a;
}

std::shared_ptr<const ct::CtData> loadCt(const Arguments& a) {
    if (a.has("input")) {
        if (a.has("case")) throw UsageError("give either --case or --input, not both");
        return std::make_shared<const ct::CtData>(ct::readCtFile(a.nonEmpty("input")));
    }
    const AbortableStage stage("simulating the CT demo case");
    return std::make_shared<const ct::CtData>(ct::simulate(ct::ctDemoCase(a.get("case", "ct-2d"))));
}

std::shared_ptr<Backend> ctBackend(const Arguments& a, bool quiet) {
    if (a.has("threads")) setCpuThreads(a.integerIn("threads", 0, 1, 1024));
    std::string note;
    std::shared_ptr<Backend> b = createBackend(parseBackendChoice(a.get("backend", "auto")),
                                               parsePrecision(a.get("precision", "float32")), &note);
    if (!quiet) std::fprintf(stderr, "%s\n", note.c_str());
    return b;
}

// The scan decides what `auto` means (chooseCtSolver), so the options are read with it at hand.
CtSolveOptions ctSolveOptions(const Arguments& a, const ct::CtData& data) {
    CtSolveOptions o;
    CtSolver requested = parseCtSolver(a.get("ct-solver", "auto"));
    // A prior's options ask for CG, the subsets' for OS-SART, whatever the scan.
    if (requested == CtSolver::Auto && (a.has("regularizer") || a.has("lambda"))) requested = CtSolver::Cg;
    if (requested == CtSolver::Auto && (a.has("subsets") || a.has("relaxation"))) requested = CtSolver::OsSart;
    o.solver = chooseCtSolver(requested, data);
    if (o.solver == CtSolver::OsSart) {
        for (const char* prior_option : {"regularizer", "lambda"})
            if (a.has(prior_option))
                throw UsageError(std::string("--") + prior_option +
                                 " has no meaning for OS-SART (no prior: the iteration budget regularises); "
                                 "give --ct-solver cg to use a prior");
        o.os_sart.subsets = a.integerIn("subsets", o.os_sart.subsets, 1, 65536);
        o.os_sart.sart.relaxation = a.numberIn("relaxation", o.os_sart.sart.relaxation, 1e-3, 1.999);
    } else {
        for (const char* sart_option : {"subsets", "relaxation"})
            if (a.has(sart_option))
                throw UsageError(std::string("--") + sart_option + " applies to OS-SART only (--ct-solver os-sart)");
    }
    o.iterative.prior = parseRegularizer(a.get("regularizer", "tv"));
    // A demo case's λ is tuned for the finite-difference prior; anything else starts from the prior's default.
    double default_lambda = ct::defaultLambda(o.iterative.prior);
    if (a.has("case") && o.iterative.prior == RegularizerKind::FiniteDifference && ct::isCtCase(a.get("case"))) {
        const double tuned = ct::ctDemoCase(a.get("case")).fd_lambda;
        if (tuned > 0) default_lambda = tuned;
    }
    // TV's λ follows the scan's noise unless given (ct::autoLambda); `--lambda auto` asks for that rule.
    o.iterative.auto_lambda = a.get("lambda", o.iterative.prior == RegularizerKind::TotalVariation ? "auto" : "") == "auto";
    if (!o.iterative.auto_lambda) o.iterative.lambda = a.numberIn("lambda", default_lambda, 0, 1e6);
    o.iterations = a.integerIn("iterations", defaultIterations(o.solver), 0, 100000);
    o.tolerance = a.numberIn("tolerance", 0, 0, 1);
    o.weighted = !a.flag("unweighted");
    o.projector.threads = a.has("threads") ? a.integerIn("threads", 0, 1, 1024) : 0;
    return o;
}

Grid imageGrid(const ct::CtData& d) { return ct::gridOf(d.geometry.volume); }

void writeCtImage(const std::string& path, const ct::CtData& d, const std::vector<double>& image, const std::string& what,
                  bool quiet) {
    ImageWriteOptions o;
    o.description = "ReconStudio CT " + what + " (1/mm)";
    o.real_part = true;
    writeImage(path, imageGrid(d), ComplexArray(image.begin(), image.end()), o);
    if (!quiet) std::fprintf(stderr, "wrote %s\n", path.c_str());
}

std::string geometryLine(const ct::CtData& d) {
    const ct::CtGeometry& g = d.geometry;
    char line[320];
    std::snprintf(line, sizeof line, "%s beam, volume %dx%dx%d of %gx%gx%g mm, %zu views over %.1f deg (%s), detector %dx%d of %gx%g mm, D_so %g mm, D_sd %g mm%s",
                  g.beam.fanBeam() ? "fan" : "cone", g.volume.size[0], g.volume.size[1], g.volume.size[2],
                  g.volume.voxel_mm[0], g.volume.voxel_mm[1], g.volume.voxel_mm[2], g.beam.views(),
                  (g.beam.angles_rad.back() - g.beam.angles_rad.front()) * 180 / 3.14159265358979,
                  ct::fullScan(g.beam) ? "full scan" : "short scan", g.beam.detector_columns, g.beam.detector_rows,
                  g.beam.pixel_u_mm, g.beam.pixel_v_mm, g.beam.source_to_isocentre_mm, g.beam.source_to_detector_mm,
                  d.photons > 0 ? (", " + formatNumber(d.photons) + " photons per pixel").c_str() : ", noiseless");
    return line;
}

int ctSimulate(const std::vector<std::string>& args) {
    Arguments a(args, {"case", "volume", "voxel", "views", "detector", "pixel", "sod", "sdd", "photons", "seed", "output"},
                {"short-scan", "quiet"});
    const std::string output = a.nonEmpty("output");
    ct::CtCase c = ct::ctDemoCase(a.get("case", a.has("volume") && parseSizes("volume", a.get("volume"), 2048, 2, 3).size() == 3 ? "ct-3d" : "ct-2d"));
    ct::CtGeometry& g = c.geometry;
    if (a.has("volume")) {
        const std::vector<int> n = parseSizes("volume", a.get("volume"), 2048, 2, 3);
        g.volume.size = {n[0], n[1], n.size() == 3 ? n[2] : 1};
    }
    if (a.has("voxel")) {
        const double v = a.numberIn("voxel", 1, 1e-3, 1e3);
        g.volume.voxel_mm = {v, v, v};
    }
    if (a.has("sod")) g.beam.source_to_isocentre_mm = a.numberIn("sod", 0, 1e-3, 1e5);
    if (a.has("sdd")) g.beam.source_to_detector_mm = a.numberIn("sdd", 0, 1e-3, 1e5);
    if (a.has("detector")) {
        const std::vector<int> n = parseSizes("detector", a.get("detector"), 16384, 1, 2);
        g.beam.detector_columns = n[0];
        g.beam.detector_rows = n.size() == 2 ? n[1] : 1;
    }
    if (a.has("pixel")) {
        const double p = a.numberIn("pixel", 1, 1e-3, 1e3);
        g.beam.pixel_u_mm = g.beam.pixel_v_mm = p;
    }
    const int views = a.integerIn("views", int(g.beam.views()), 2, 65536);
    const bool short_scan = a.flag("short-scan") || (!a.has("views") && !ct::fullScan(g.beam));
    g.beam.angles_rad = short_scan ? ct::shortScanAngles(g.beam, views) : ct::fullScanAngles(views);
    c.photons = a.numberIn("photons", c.photons, 0, 1e12);
    if (c.photons > 0 && c.photons < 1) throw UsageError("--photons must be 0 (noiseless) or at least 1");
    c.seed = std::uint64_t(a.integerIn("seed", int(c.seed), 0, 2147483647));
    const bool custom = a.has("volume") || a.has("voxel") || a.has("sod") || a.has("sdd") || a.has("detector") ||
                        a.has("pixel") || a.has("views") || a.flag("short-scan") || a.has("photons");
    if (custom) {  // the case's own description (e.g. "noiseless") no longer holds
        c.description = "the " + c.name + " case changed by the command line (" +
                        (c.photons > 0 ? formatNumber(c.photons) + " photons per pixel, Poisson noise" : std::string("noiseless")) + ")";
        c.name = "simulated-ct";
    }
    const ct::CtData d = [&] {
        const AbortableStage stage("simulating the CT scan");
        return ct::simulate(c);
    }();
    ct::writeCtFile(output, d);
    if (!a.flag("quiet")) std::fprintf(stderr, "wrote %s: %s\n", output.c_str(), geometryLine(d).c_str());
    return 0;
}

struct Row {
    std::string name;
    CtResult result;
    std::optional<Quality> quality;
};

int ctRecon(const std::vector<std::string>& args, bool compare) {
    std::set<std::string> options = with(kCtDataOptions, {});
    options.insert(kCtSolveOptions.begin(), kCtSolveOptions.end());
    if (!compare) options.insert({"output", "fdk-output", "only"});
    Arguments a(args, options, compare ? with(kCtSolveFlags, {"json"}) : kCtSolveFlags);
    const bool quiet = a.flag("quiet");
    const std::string only = a.get("only", "all");
    if (only != "all" && only != "fdk" && only != "iterative") throw UsageError("--only expects fdk or iterative");
    if (!compare) {
        if (!a.has("output") && !a.has("fdk-output")) throw UsageError("recon needs --output FILE (and/or --fdk-output FILE)");
        for (const char* o : {"output", "fdk-output"})
            if (a.has(o)) {  // before any work: never write over the data (an image replaces a whole .h5 too)
                const std::string out = a.nonEmpty(o);
                if (a.has("input") && io::sameFile(out, a.get("input")))
                    throw InputError(std::string("--") + o + " '" + out + "' would overwrite the CT scan this run reads ('" +
                                     a.get("input") + "'); choose another file");
                InputSpec input;
                input.input = a.get("input");
                io::refuseOverwritingInputs(input, out, std::string("--") + o);
            }
    }
    const ct::FdkOptions fdk_options{ct::parseRampWindow(a.get("window", "ram-lak")), 0};
    parseCtSolver(a.get("ct-solver", "auto"));  // a bad name refused before any work
    std::shared_ptr<Backend> backend = ctBackend(a, quiet);
    std::shared_ptr<const ct::CtData> data = loadCt(a);
    const CtSolveOptions solve_options = ctSolveOptions(a, *data);
    CtSession session(backend, data);
    std::unique_ptr<Monitor> monitor = makeProgressMonitor(quiet, solve_options.iterations);

    std::vector<Row> rows;
    auto measure = [&](const std::vector<double>& image) -> std::optional<Quality> {
        if (!data->hasTruth()) return std::nullopt;
        return measureQuality(ComplexArray(image.begin(), image.end()), ComplexArray(data->truth.begin(), data->truth.end()),
                              false);
    };
    const bool want_fdk = compare || only != "iterative";
    const bool want_iterative = compare || only != "fdk";
    if (want_fdk) {
        CtResult r = session.fdk(fdk_options, *monitor);
        rows.push_back({"fdk", r, measure(r.image)});
    }
    bool cancelled = false;
    if (want_iterative) {
        CtResult r = session.solve(solve_options, *monitor);
        cancelled = r.cancelled;
        if (cancelled) std::fprintf(stderr, "cancelled after %zu iterations: keeping the last complete iterate\n", r.history.size());
        rows.push_back({"iterative", r, measure(r.image)});
    }

    if (compare) {
        std::printf("ReconStudio %s — %s (CT)\n", RECONSTUDIO_VERSION, data->name.c_str());
        std::printf("  %s\n  %s\n", geometryLine(*data).c_str(), backend->info().describe().c_str());
        for (const Row& r : rows) std::printf("  %s: %s\n", r.name.c_str(), r.result.description.c_str());
        std::printf("\n  %-20s %10s %10s %10s\n", "method", "seconds", "PSNR dB", "error %");
        for (const Row& r : rows) {
            if (r.quality)
                std::printf("  %-20s %10.3f %10.2f %10.2f\n", r.name.c_str(), r.result.seconds, r.quality->psnr_db,
                            r.quality->error_percent);
            else
                std::printf("  %-20s %10.3f %10s %10s\n", r.name.c_str(), r.result.seconds, "-", "-");
        }
        if (!data->hasTruth()) std::printf("  (no true volume in this scan: PSNR and error need one)\n");
        if (a.flag("json")) {
            const ct::CtGeometry& g = data->geometry;
            std::ostringstream j;
            j << "{\"version\":" << jsonString(RECONSTUDIO_VERSION) << ",\"modality\":\"ct\",\"case\":{\"name\":"
              << jsonString(data->name) << ",\"volume\":[" << g.volume.size[0] << "," << g.volume.size[1] << ","
              << g.volume.size[2] << "],\"views\":" << g.beam.views() << ",\"detector\":[" << g.beam.detector_columns
              << "," << g.beam.detector_rows << "],\"photons\":" << jsonNumber(data->photons)
              << ",\"source\":" << jsonString(data->source) << "},\"backend\":" << jsonString(backend->info().describe())
              << ",\"window\":" << jsonString(ct::toString(fdk_options.window))
              << ",\"solver\":" << jsonString(toString(solve_options.solver))
              << ",\"regularizer\":"
              << jsonString(solve_options.solver == CtSolver::OsSart ? "none" : toString(solve_options.iterative.prior))
              << ",\"lambda\":" << jsonNumber(rows.back().result.lambda)
              << ",\"lambda_auto\":" << (solve_options.solver == CtSolver::Cg && solve_options.iterative.auto_lambda ? "true" : "false")
              << ",\"lambda_scale\":" << jsonNumber(rows.back().result.lambda_scale)
              << ",\"weighted\":" << (solve_options.weighted && !data->counts.empty() ? "true" : "false")
              << ",\"iterations\":" << rows.back().result.history.size()
              << ",\"cancelled\":" << (cancelled ? "true" : "false") << ",\"methods\":[";
            for (std::size_t i = 0; i < rows.size(); ++i) {
                const Row& r = rows[i];
                j << (i ? "," : "") << "{\"name\":" << jsonString(r.name) << ",\"seconds\":" << jsonNumber(r.result.seconds)
                  << ",\"psnr_db\":" << (r.quality ? jsonNumber(r.quality->psnr_db) : "null")
                  << ",\"error_percent\":" << (r.quality ? jsonNumber(r.quality->error_percent) : "null") << "}";
            }
            j << "]}";
            std::printf("%s\n", j.str().c_str());
        }
        return cancelled ? 130 : 0;
    }

    for (const Row& r : rows) {
        if (r.quality && !quiet)
            std::fprintf(stderr, "%s: PSNR %.2f dB, error %.2f %% (%.3f s)\n", r.name.c_str(), r.quality->psnr_db,
                         r.quality->error_percent, r.result.seconds);
    }
    const Row* iterative = rows.back().name == "iterative" ? &rows.back() : nullptr;
    const Row* fdk = rows.front().name == "fdk" ? &rows.front() : nullptr;
    if (a.has("output")) {
        const Row* main = iterative ? iterative : fdk;
        writeCtImage(a.get("output"), *data, main->result.image, main->name, quiet);
    }
    if (a.has("fdk-output")) {
        if (!fdk) throw UsageError("--fdk-output needs FDK (not --only iterative)");
        writeCtImage(a.get("fdk-output"), *data, fdk->result.image, "fdk", quiet);
    }
    return cancelled ? 130 : 0;
}

}  // namespace

std::string takeModality(std::vector<std::string>& args) {
    std::string modality;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] != "--modality") continue;
        if (i + 1 >= args.size()) throw UsageError("--modality expects mr or ct");
        modality = args[i + 1];
        if (modality != "mr" && modality != "ct") throw UsageError("--modality expects mr or ct, got '" + modality + "'");
        args.erase(args.begin() + std::ptrdiff_t(i), args.begin() + std::ptrdiff_t(i) + 2);
        --i;
    }
    return modality;
}

bool looksLikeCt(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
        if (args[i] == "--case" && ct::isCtCase(args[i + 1])) return true;
        if (args[i] == "--input" && ct::isCtFile(args[i + 1])) return true;
    }
    return false;
}

int runCtCommand(const std::string& command, const std::vector<std::string>& args) {
    if (command == "simulate") return ctSimulate(args);
    if (command == "recon") return ctRecon(args, false);
    if (command == "compare") return ctRecon(args, true);
    throw UsageError("'" + command + "' has no CT form (CT: simulate, recon, compare)");
}

}  // namespace recon::cli
