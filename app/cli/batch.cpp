#include "batch.hpp"

#include <fcntl.h>
#include <glob.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "arguments.hpp"
#include "recon/core/errors.hpp"
#include "recon/io/file_util.hpp"
#include "recon/io/recipe.hpp"

extern char** environ;

namespace recon::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kPlanVersion = 1;
constexpr int kMaxWorkers = 256;
// Slurm's default MaxArraySize is 1001 (indices 0 ... 1000): larger batches put
// several rows into each array task unless --rows-per-task says otherwise.
constexpr int kDefaultMaxArrayTasks = 1000;

// ---------------------------------------------------------------- the plan

struct Row {
    int index = 0;
    std::string input;                              // absolute
    std::string name;                               // output stem
    std::map<std::string, std::string> overrides;   // recipe key -> text
    std::string hash;                               // of this row's effective recipe
};

struct Plan {
    std::string dir;      // absolute output folder
    std::string engine;   // local | slurm
    int workers = 1;      // local engine
    std::vector<std::string> gpus;  // local engine: one per worker, round robin
    io::Recipe recipe;    // the batch's recipe, before per-row overrides
    std::vector<Row> rows;
    int rows_per_task = 0;  // Slurm: rows one array task reconstructs in turn (0: as few as fit one array)
    // One sbatch job array: its task t reconstructs rows[t*rows_per_task ...] in turn.
    struct Submission {
        std::string job;  // Slurm's job id ("" until sbatch answered)
        std::vector<int> rows;
        int rows_per_task = 1;
        std::string array;
    };
    std::vector<Submission> slurm_jobs;

    std::string path(const std::string& rel) const { return (fs::path(dir) / rel).string(); }
    std::string recipeFile(const Row& r) const { return path("recipes/" + r.name + ".json"); }
    std::string resultFile(const Row& r) const { return path("results/" + r.name + ".json"); }
    std::string logFile(const Row& r) const { return path("logs/" + r.name + ".log"); }
    std::string output(const Row& r) const { return path(r.name + "." + recipe.output_format); }
    std::string griddingOutput(const Row& r) const { return path(r.name + "-gridding." + recipe.output_format); }
};

std::string readText(const std::string& path, const std::string& what) {
    return io::readSmallFile(path, what, 64u << 20);
}

Json parseJsonFile(const std::string& path, const std::string& what) {
    const std::string text = readText(path, what);
    try {
        return Json::parse(text);
    } catch (const Json::exception& e) {
        throw InputError(what + " '" + path + "' is not valid JSON: " + e.what());
    }
}

void savePlan(const Plan& p) {
    Json rows = Json::array();
    for (const Row& r : p.rows)
        rows.push_back({{"index", r.index}, {"input", r.input}, {"name", r.name}, {"overrides", r.overrides},
                        {"hash", r.hash}});
    Json jobs = Json::array();
    for (const auto& sub : p.slurm_jobs)
        jobs.push_back({{"job", sub.job}, {"rows", sub.rows}, {"rows_per_task", sub.rows_per_task}, {"array", sub.array}});
    const Json j = {{"reconstudio_batch", kPlanVersion}, {"engine", p.engine}, {"workers", p.workers},
                    {"gpus", p.gpus}, {"rows_per_task", p.rows_per_task}, {"rows", rows}, {"slurm_jobs", jobs}};
    io::writeTextAtomically(p.path("batch.json"), j.dump(2) + "\n");
}

Plan loadPlan(const std::string& dir_arg) {
    Plan p;
    p.dir = fs::absolute(dir_arg).lexically_normal().string();
    const std::string file = p.path("batch.json");
    if (!fs::exists(file)) throw InputError("'" + dir_arg + "' is not a batch folder (no batch.json)");
    try {
        const Json j = parseJsonFile(file, "batch plan");
        if (j.at("reconstudio_batch").get<int>() != kPlanVersion)
            throw InputError("batch plan '" + file + "' has an unknown version");
        p.engine = j.at("engine").get<std::string>();
        p.workers = j.at("workers").get<int>();
        p.gpus = j.at("gpus").get<std::vector<std::string>>();
        for (const Json& r : j.at("rows"))
            p.rows.push_back({r.at("index").get<int>(), r.at("input").get<std::string>(), r.at("name").get<std::string>(),
                              r.at("overrides").get<std::map<std::string, std::string>>(), r.at("hash").get<std::string>()});
        p.rows_per_task = j.at("rows_per_task").get<int>();
        for (const Json& s : j.at("slurm_jobs"))
            p.slurm_jobs.push_back({s.at("job").get<std::string>(), s.at("rows").get<std::vector<int>>(),
                                    s.at("rows_per_task").get<int>(), s.at("array").get<std::string>()});
    } catch (const Json::exception& e) {
        throw InputError("batch plan '" + file + "' is damaged: " + e.what());
    }
    p.recipe = io::readRecipe(p.path("recipe.json"));
    return p;
}

// ---------------------------------------------------------------- the manifest

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// One CSV line: fields separated by commas, "..." quotes a field ("" is a quote).
std::vector<std::string> csvFields(const std::string& line, const std::string& where) {
    std::vector<std::string> out;
    std::string field;
    bool quoted = false, was_quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') field += '"', ++i;
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = was_quoted = true;
        } else if (c == ',') {
            out.push_back(was_quoted ? field : trim(field));
            field.clear();
            was_quoted = false;
        } else {
            field += c;
        }
    }
    if (quoted) throw InputError(where + ": unterminated quote");
    out.push_back(was_quoted ? field : trim(field));
    return out;
}

bool isDataFile(const fs::path& p) {
    return io::hasExtension(p.string(), {".h5", ".hdf5", ".mrd"});
}

std::string stemOf(const std::string& path) {
    std::string name = fs::path(path).filename().string();
    const std::string ext = io::extensionOf(name);
    return name.substr(0, name.size() - ext.size());
}

std::vector<Row> readManifest(const std::string& manifest) {
    std::vector<Row> rows;
    auto add = [&](const std::string& input, std::map<std::string, std::string> overrides) {
        Row r;
        r.index = int(rows.size());
        r.input = fs::absolute(input).lexically_normal().string();
        r.name = stemOf(r.input);
        r.overrides = std::move(overrides);
        rows.push_back(std::move(r));
    };
    std::error_code ec;
    if (fs::is_directory(manifest, ec)) {
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(manifest))
            if (e.is_regular_file() && isDataFile(e.path())) files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        if (files.empty()) throw InputError("manifest folder '" + manifest + "' holds no .h5, .hdf5 or .mrd file");
        for (const auto& f : files) add(f, {});
    } else if (io::hasExtension(manifest, {".csv"})) {
        std::ifstream in(manifest);
        if (!in) throw InputError("manifest '" + manifest + "' cannot be opened: " + std::strerror(errno));
        const fs::path base = fs::path(manifest).parent_path();
        std::string line;
        std::vector<std::string> header;
        for (int line_no = 1; std::getline(in, line); ++line_no) {
            const std::string where = "manifest '" + manifest + "' line " + std::to_string(line_no);
            if (trim(line).empty() || trim(line)[0] == '#') continue;
            std::vector<std::string> fields = csvFields(line, where);
            if (header.empty()) {
                header = fields;
                if (std::find(header.begin(), header.end(), "input") == header.end())
                    throw InputError(where + ": the header has no 'input' column");
                const auto& keys = io::overridableKeys();
                for (const auto& column : header)
                    if (column != "input" && std::find(keys.begin(), keys.end(), column) == keys.end())
                        throw InputError(where + ": column '" + column + "' is not a setting a data set may override");
                continue;
            }
            if (fields.size() != header.size())
                throw InputError(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                                 std::to_string(header.size()));
            std::string input;
            std::map<std::string, std::string> overrides;
            for (std::size_t c = 0; c < header.size(); ++c) {
                if (header[c] == "input") input = fields[c];
                else if (!fields[c].empty()) overrides[header[c]] = fields[c];
            }
            if (input.empty()) throw InputError(where + ": empty 'input'");
            add(fs::path(input).is_absolute() ? input : (base / input).string(), overrides);
        }
        if (rows.empty()) throw InputError("manifest '" + manifest + "' lists no data set");
    } else if (manifest.find_first_of("*?[") != std::string::npos) {
        glob_t g{};
        const int rc = ::glob(manifest.c_str(), 0, nullptr, &g);
        std::vector<std::string> files;
        for (std::size_t i = 0; rc == 0 && i < g.gl_pathc; ++i)
            if (fs::is_regular_file(g.gl_pathv[i])) files.push_back(g.gl_pathv[i]);
        ::globfree(&g);
        if (files.empty()) throw InputError("manifest pattern '" + manifest + "' matches no file");
        for (const auto& f : files) add(f, {});  // glob(3) sorts its matches
    } else {
        throw InputError("manifest '" + manifest + "' is neither a folder, a .csv file nor a glob pattern" +
                         (fs::exists(manifest) ? "" : " (and does not exist)"));
    }
    std::map<std::string, int> seen;
    for (const Row& r : rows) {
        auto [it, fresh] = seen.emplace(r.name, r.index);
        if (!fresh)
            throw InputError("manifest '" + manifest + "': data sets " + std::to_string(it->second + 1) + " and " +
                             std::to_string(r.index + 1) + " would both be written as '" + r.name +
                             "' (same file name in different folders)");
    }
    return rows;
}

// ---------------------------------------------------------------- one row

struct Result {
    std::string status = "pending";  // ok | failed | pending
    double seconds = 0;      // wall clock
    double cpu_seconds = 0;  // user + system of the recon process: what a data set costs a shared node
    std::string device, message, hash, slurm_state;
    int iterations = 0;
    std::optional<double> psnr_db, error_percent;
    double started = 0, finished = 0;  // seconds since the epoch
};

double now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Json optionalNumber(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

void saveResult(const Plan& p, const Row& row, const Result& r) {
    const Json j = {{"input", row.input}, {"status", r.status}, {"seconds", r.seconds}, {"cpu_seconds", r.cpu_seconds}, {"device", r.device},
                    {"iterations", r.iterations}, {"psnr_db", optionalNumber(r.psnr_db)},
                    {"error_percent", optionalNumber(r.error_percent)}, {"message", r.message}, {"hash", r.hash},
                    {"started", r.started}, {"finished", r.finished}};
    io::writeTextAtomically(p.resultFile(row), j.dump(2) + "\n");
}

std::optional<Result> loadResult(const Plan& p, const Row& row) {
    const std::string file = p.resultFile(row);
    if (!fs::exists(file)) return std::nullopt;
    try {
        const Json j = parseJsonFile(file, "result");
        Result r;
        r.status = j.at("status");
        r.seconds = j.at("seconds");
        r.cpu_seconds = j.value("cpu_seconds", 0.0);
        r.device = j.at("device");
        r.iterations = j.at("iterations");
        if (!j.at("psnr_db").is_null()) r.psnr_db = j.at("psnr_db").get<double>();
        if (!j.at("error_percent").is_null()) r.error_percent = j.at("error_percent").get<double>();
        r.message = j.at("message");
        r.hash = j.at("hash");
        r.started = j.at("started");
        r.finished = j.at("finished");
        return r;
    } catch (const std::exception&) {
        return std::nullopt;  // a damaged record counts as no record: the row runs again
    }
}

// Done: an ok record for this very recipe, and the images it names still there.
bool isComplete(const Plan& p, const Row& row, const std::optional<Result>& r) {
    return r && r->status == "ok" && r->hash == row.hash && fs::exists(p.output(row)) &&
           (!p.recipe.gridding_output || fs::exists(p.griddingOutput(row)));
}

std::string lastLine(const std::string& file) {
    std::ifstream in(file);
    std::string line, last;
    while (std::getline(in, line))
        if (!trim(line).empty()) last = trim(line);
    const std::string prefix = "reconstudio-cli recon: ";
    if (last.rfind(prefix, 0) == 0) last = last.substr(prefix.size());
    if (last.rfind("error: ", 0) == 0) last = last.substr(7);
    return last;
}

std::atomic<bool> g_stop{false};
extern "C" void onStop(int) { g_stop = true; }

std::string selfExecutable() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot find this program's own path (/proc/self/exe): " + ec.message());
    return p.string();
}

// Runs argv with stdout and stderr into `log`; the exit status as waitpid gives it,
// and the child's CPU seconds (user + system) in `cpu_seconds` when asked.
int runProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env_overrides,
               const std::string& log, double* cpu_seconds = nullptr) {
    // Everything the child needs is built before fork(): after it, in a threaded
    // program, only async-signal-safe calls are allowed.
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        if (!env_overrides.count(kv.substr(0, kv.find('=')))) env.push_back(kv);
    }
    for (const auto& [k, v] : env_overrides) env.push_back(k + "=" + v);
    std::vector<char*> cargv, cenv;
    for (const auto& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
    cargv.push_back(nullptr);
    for (const auto& s : env) cenv.push_back(const_cast<char*>(s.c_str()));
    cenv.push_back(nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot create log '" + log + "': " + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        ::execve(cargv[0], cargv.data(), cenv.data());
        ::_exit(127);
    }
    ::close(fd);
    if (pid < 0) throw Error(std::string("cannot start a process: ") + std::strerror(errno));
    int status = 0;
    struct rusage usage {};
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    if (cpu_seconds)
        *cpu_seconds = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    return status;
}

// Reconstructs one row with `reconstudio-cli recon` in a child process (a crash
// or a damaged file stays that row's) and records the outcome. No record is
// written when the batch itself was stopped: the row stays pending.
Result runRow(const Plan& p, const Row& row, const std::map<std::string, std::string>& env) {
    fs::create_directories(p.path("results"));
    fs::create_directories(p.path("logs"));
    // Temporaries of an earlier attempt that was killed while writing (AtomicOutput's
    // ".NAME.part-*" names); nothing else writes this row's outputs now.
    for (const auto& e : fs::directory_iterator(p.dir)) {
        const std::string f = e.path().filename().string();
        if (f.rfind("." + row.name + ".part-", 0) == 0 || f.rfind("." + row.name + "-gridding.part-", 0) == 0)
            fs::remove(e.path());
    }
    const std::string report = p.path("results/." + row.name + ".report.json");
    std::vector<std::string> argv = {selfExecutable(), "recon", "--recipe", p.recipeFile(row), "--input", row.input,
                                     "--output", p.output(row), "--report", report, "--quiet"};
    if (p.recipe.gridding_output) argv.insert(argv.end(), {"--gridding-output", p.griddingOutput(row)});
    Result r;
    r.hash = row.hash;
    r.started = now();
    const int status = runProcess(argv, env, p.logFile(row), &r.cpu_seconds);
    r.finished = now();
    r.seconds = r.finished - r.started;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        try {
            const Json j = parseJsonFile(report, "report");
            r.device = j.at("device");
            r.iterations = j.at("iterations");
            if (!j.at("psnr_db").is_null()) r.psnr_db = j.at("psnr_db").get<double>();
            if (!j.at("error_percent").is_null()) r.error_percent = j.at("error_percent").get<double>();
            r.status = "ok";
        } catch (const std::exception& e) {
            r.status = "failed";
            r.message = std::string("recon succeeded but its report is unreadable: ") + e.what();
        }
    } else {
        r.status = "failed";
        r.message = lastLine(p.logFile(row));
        if (WIFSIGNALED(status))
            r.message = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
                        ")" + (r.message.empty() ? "" : ": " + r.message);
        else if (r.message.empty())
            r.message = "recon exited with status " + std::to_string(WEXITSTATUS(status));
    }
    fs::remove(report);
    if (g_stop && r.status != "ok") return Result{};
    saveResult(p, row, r);
    return r;
}

// ---------------------------------------------------------------- Slurm

struct Captured {
    int status = -1;
    std::string out;
};

// A Slurm client's full path (execve needs one); throws when it is not on PATH.
std::string slurmTool(const std::string& name) {
    std::stringstream path(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
    for (std::string dir; std::getline(path, dir, ':');)
        if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0) return (fs::path(dir) / name).string();
    throw Error("'" + name + "' not found on PATH: is this a Slurm submit host?");
}

// Runs a Slurm client command and captures its output (stdout and stderr).
Captured capture(const std::vector<std::string>& argv) {
    const std::string log = (fs::temp_directory_path() / ("reconstudio-slurm-" + std::to_string(::getpid()) + "-" +
                                                          std::to_string(now()) + ".out")).string();
    std::vector<std::string> resolved = argv;
    resolved[0] = slurmTool(argv[0]);
    Captured c;
    const int status = runProcess(resolved, {}, log);
    c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    c.out = readText(log, "output");
    fs::remove(log);
    return c;
}

// "0-2,5": row indices, compactly (for messages).
std::string arraySpec(const std::vector<int>& indices) {
    std::string out;
    for (std::size_t i = 0; i < indices.size();) {
        std::size_t j = i;
        while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(indices[i]);
        if (j > i) out += '-' + std::to_string(indices[j]);
        i = j + 1;
    }
    return out;
}

std::string shellQuote(const std::string& s) {
    std::string o = "'";
    for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return o + "'";
}

void writeJobScript(const Plan& p) {
    const io::SlurmResources& s = p.recipe.slurm;
    fs::create_directories(p.path("logs"));  // Slurm opens each task's --output there before the task runs
    std::ostringstream sh;
    sh << "#!/bin/sh\n"
       << "# One task of a ReconStudio batch: the rows of array task $SLURM_ARRAY_TASK_ID of\n"
       << "# submission $1 (batch.json's slurm_jobs), one after the other.\n"
       << "#SBATCH --job-name=reconstudio-batch\n"
       << "#SBATCH --output=" << p.path("logs/slurm-%A_%a.out") << "\n"
       << "#SBATCH --ntasks=1\n";
    if (!s.partition.empty()) sh << "#SBATCH --partition=" << s.partition << "\n";
    if (!s.time.empty()) sh << "#SBATCH --time=" << s.time << "\n";
    if (!s.memory.empty()) sh << "#SBATCH --mem=" << s.memory << "\n";
    if (s.gpus_per_task > 0) sh << "#SBATCH --gpus-per-task=" << s.gpus_per_task << "\n";
    sh << "exec " << shellQuote(selfExecutable()) << " batch task " << shellQuote(p.dir)
       << " --submission \"$1\" --task \"$SLURM_ARRAY_TASK_ID\"\n";
    io::writeTextAtomically(p.path("batch.sbatch"), sh.str());
    fs::permissions(p.path("batch.sbatch"), fs::perms::owner_exec, fs::perm_options::add);
}

void submit(Plan& p, const std::vector<int>& indices) {
    if (indices.empty()) return;
    writeJobScript(p);
    Plan::Submission sub;
    sub.rows = indices;
    const int n = int(indices.size());
    sub.rows_per_task = p.rows_per_task > 0 ? p.rows_per_task : (n + kDefaultMaxArrayTasks - 1) / kDefaultMaxArrayTasks;
    const int tasks = (n + sub.rows_per_task - 1) / sub.rows_per_task;
    sub.array = "0-" + std::to_string(tasks - 1);
    if (p.recipe.slurm.max_parallel > 0) sub.array += "%" + std::to_string(p.recipe.slurm.max_parallel);
    // Recorded before sbatch: a task may start before sbatch has even answered.
    p.slurm_jobs.push_back(sub);
    savePlan(p);
    const std::string number = std::to_string(p.slurm_jobs.size() - 1);
    const Captured c = capture({"sbatch", "--parsable", "--array=" + sub.array, p.path("batch.sbatch"), number});
    const std::string id = trim(c.out.substr(0, c.out.find_first_of(";\n")));
    if (c.status != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
        p.slurm_jobs.pop_back();
        savePlan(p);
        throw Error("sbatch failed (status " + std::to_string(c.status) + "): " + trim(c.out));
    }
    p.slurm_jobs.back().job = id;
    savePlan(p);
    std::fprintf(stderr, "submitted Slurm job %s, array %s: %d data sets, %d per task (rows %s)\n", id.c_str(),
                 sub.array.c_str(), n, sub.rows_per_task, arraySpec(indices).c_str());
}

// Each row's Slurm state, from its latest submission: squeue while the
// controller remembers the job, else sacct (needs accounting; may be absent).
std::map<int, std::string> slurmStates(const Plan& p, std::string* note) {
    std::map<std::string, std::string> by_task;  // "job_index" -> state
    std::string ids;
    for (const auto& sub : p.slurm_jobs)
        if (!sub.job.empty()) ids += (ids.empty() ? "" : ",") + sub.job;
    if (ids.empty()) return {};
    auto parse = [&](const std::string& out) {
        std::stringstream in(out);
        std::string line;
        while (std::getline(in, line)) {
            const auto bar = line.find('|');
            if (bar == std::string::npos) continue;
            std::string state = trim(line.substr(bar + 1));
            state = state.substr(0, state.find(' '));  // "CANCELLED by 0"
            by_task.emplace(trim(line.substr(0, bar)), state);
        }
    };
    const Captured q = capture({"squeue", "-h", "-r", "--states=all", "-j", ids, "-o", "%i|%T"});
    if (q.status == 0) parse(q.out);
    const Captured a = capture({"sacct", "-n", "-X", "-P", "-j", ids, "-o", "JobID,State"});
    if (a.status == 0) parse(a.out);
    else if (note) *note = "sacct unavailable (" + trim(a.out.substr(0, a.out.find('\n'))) + "): states from squeue only";
    std::map<int, std::string> states;
    for (const auto& sub : p.slurm_jobs)  // later submissions overwrite earlier ones
        for (std::size_t k = 0; k < sub.rows.size(); ++k) {
            auto it = by_task.find(sub.job + "_" + std::to_string(int(k) / sub.rows_per_task));
            if (it != by_task.end()) states[sub.rows[k]] = it->second;
        }
    return states;
}

bool isActive(const std::string& state) {
    static const std::set<std::string> active = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                                                 "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT"};
    return active.count(state) > 0;
}

// ---------------------------------------------------------------- the summary

std::vector<Result> collect(const Plan& p, std::string* note) {
    const std::map<int, std::string> states = p.engine == "slurm" ? slurmStates(p, note) : std::map<int, std::string>{};
    std::vector<Result> out;
    for (const Row& row : p.rows) {
        const std::optional<Result> rec = loadResult(p, row);
        Result r;
        auto st = states.find(row.index);
        const std::string state = st == states.end() ? "" : st->second;
        if (isComplete(p, row, rec)) r = *rec;
        else if (isActive(state)) r.status = "pending";
        else if (rec && rec->hash == row.hash) r = *rec;  // failed, or ok with its image gone
        else if (!state.empty() && state != "COMPLETED")
            r.status = "failed", r.message = "Slurm: " + state + " before a result was written";
        if (r.status == "ok" && !isComplete(p, row, rec)) r.status = "failed", r.message = "output missing";
        r.slurm_state = state;
        out.push_back(r);
    }
    return out;
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    return o + "\"";
}

std::string fixed(const std::optional<double>& v, int digits) {
    if (!v) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, *v);
    return buf;
}

void writeSummary(const Plan& p, const std::vector<Result>& results) {
    std::ostringstream csv;
    csv << "index,input,output,status,seconds,cpu_seconds,device,iterations,psnr_db,error_percent,slurm_state,message\n";
    Json rows = Json::array();
    std::map<std::string, int> counts = {{"ok", 0}, {"failed", 0}, {"pending", 0}};
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
        const Row& row = p.rows[i];
        const Result& r = results[i];
        const bool ran = r.status != "pending";
        ++counts[r.status];
        csv << row.index << "," << csvField(row.input) << "," << csvField(fs::path(p.output(row)).filename().string())
            << "," << r.status << "," << (ran ? fixed(r.seconds, 3) : "") << ","
            << (ran ? fixed(r.cpu_seconds, 3) : "") << "," << csvField(r.device) << ","
            << (r.status == "ok" ? std::to_string(r.iterations) : "") << "," << fixed(r.psnr_db, 3) << ","
            << fixed(r.error_percent, 3) << "," << r.slurm_state << "," << csvField(r.message) << "\n";
        rows.push_back({{"index", row.index}, {"name", row.name}, {"input", row.input},
                        {"output", fs::path(p.output(row)).filename().string()}, {"status", r.status},
                        {"seconds", ran ? Json(r.seconds) : Json(nullptr)},
                        {"cpu_seconds", ran ? Json(r.cpu_seconds) : Json(nullptr)}, {"device", r.device},
                        {"iterations", r.status == "ok" ? Json(r.iterations) : Json(nullptr)},
                        {"psnr_db", optionalNumber(r.psnr_db)}, {"error_percent", optionalNumber(r.error_percent)},
                        {"slurm_state", r.slurm_state}, {"message", r.message}, {"recipe_hash", row.hash},
                        {"overrides", row.overrides}});
    }
    const Json summary = {{"reconstudio_batch_summary", kPlanVersion}, {"engine", p.engine},
                          {"recipe_hash", io::recipeHash(p.recipe)}, {"counts", counts}, {"rows", rows}};
    // Both written and synced before either replaces its old self: a full disk keeps the old
    // pair, never a new CSV beside an old JSON.
    io::AtomicOutput csv_out(p.path("summary.csv")), json_out(p.path("summary.json"));
    const std::string csv_text = csv.str(), json_text = summary.dump(2) + "\n";
    csv_out.write(csv_text.data(), csv_text.size());
    json_out.write(json_text.data(), json_text.size());
    io::commitAll({&csv_out, &json_out});
}

int report(const Plan& p, const std::vector<Result>& results, const std::string& note) {
    writeSummary(p, results);
    int ok = 0, failed = 0, pending = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        (r.status == "ok" ? ok : r.status == "failed" ? failed : pending)++;
        if (r.status == "failed")
            std::fprintf(stderr, "  failed: %s: %s\n", p.rows[i].name.c_str(), r.message.c_str());
    }
    if (!note.empty()) std::fprintf(stderr, "  note: %s\n", note.c_str());
    std::printf("%d ok, %d failed, %d pending of %zu; summary: %s\n", ok, failed, pending, results.size(),
                p.path("summary.csv").c_str());
    return failed ? 1 : pending ? 3 : 0;
}

// ---------------------------------------------------------------- engines

int runLocal(const Plan& p, const std::vector<int>& todo) {
    std::atomic<std::size_t> next{0};
    std::mutex print;
    std::size_t finished = 0;
    const int workers = std::max(1, std::min<int>(p.workers, int(todo.size())));
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    auto work = [&](int w) {
        std::map<std::string, std::string> env;
        // The machine's cores are shared by the workers; a GPU each, round robin.
        if (!std::getenv("OMP_NUM_THREADS")) env["OMP_NUM_THREADS"] = std::to_string(std::max(1u, cores / workers));
        if (!p.gpus.empty()) env["CUDA_VISIBLE_DEVICES"] = p.gpus[std::size_t(w) % p.gpus.size()];
        for (std::size_t k; !g_stop && (k = next++) < todo.size();) {
            const Row& row = p.rows[std::size_t(todo[k])];
            const Result r = runRow(p, row, env);
            std::lock_guard lock(print);
            ++finished;
            std::fprintf(stderr, "[%zu/%zu] %s: %s %.2f s%s%s\n", finished, todo.size(), row.name.c_str(),
                         r.status.c_str(), r.seconds, r.message.empty() ? "" : ": ", r.message.c_str());
        }
    };
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) pool.emplace_back(work, w);
    for (auto& t : pool) t.join();
    return 0;
}

// Rows still to do: not complete, and (on Slurm) not queued or running now.
std::vector<int> rowsToDo(const Plan& p, std::string* note) {
    const std::vector<Result> now_results = collect(p, note);
    std::vector<int> todo;
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
        const bool complete = isComplete(p, p.rows[i], loadResult(p, p.rows[i]));
        if (!complete && !isActive(now_results[i].slurm_state)) todo.push_back(p.rows[i].index);
    }
    return todo;
}

int execute(Plan& p, const std::vector<int>& todo, const std::string& note) {
    std::fprintf(stderr, "%zu of %zu data sets to reconstruct (%zu complete for this recipe)\n", todo.size(),
                 p.rows.size(), p.rows.size() - todo.size());
    if (p.engine == "slurm") {
        submit(p, todo);
        std::string status_note;
        const int rc = report(p, collect(p, &status_note), status_note);
        std::printf("follow with: reconstudio-cli batch status %s\n", p.dir.c_str());
        return rc == 1 ? 1 : 0;
    }
    runLocal(p, todo);
    const int rc = report(p, collect(p, nullptr), note);
    return g_stop ? 130 : rc;
}

void installStopHandlers() {
    std::signal(SIGINT, onStop);
    std::signal(SIGTERM, onStop);
}

// ---------------------------------------------------------------- commands

int cmdRun(const std::vector<std::string>& args) {
    Arguments a(args,
                {"recipe", "manifest", "output-dir", "engine", "jobs", "gpus", "partition", "time", "mem",
                 "gpus-per-task", "max-parallel", "rows-per-task"},
                {});
    for (const char* required : {"recipe", "manifest", "output-dir"})
        if (!a.has(required)) throw UsageError(std::string("batch needs --") + required);
    Plan p;
    p.engine = a.get("engine", "local");
    if (p.engine != "local" && p.engine != "slurm") throw UsageError("--engine expects local or slurm, got '" + p.engine + "'");
    p.workers = a.integer("jobs", 1);
    if (p.workers < 1 || p.workers > kMaxWorkers)
        throw UsageError("-j expects between 1 and " + std::to_string(kMaxWorkers) + " workers, got " + a.get("jobs"));
    if (p.engine == "slurm" && a.has("jobs")) throw UsageError("-j is for --engine local; Slurm's array throttle is --max-parallel");
    p.rows_per_task = a.integer("rows-per-task", 0);
    if ((a.has("rows-per-task") && p.rows_per_task < 1) || p.rows_per_task > 100000) throw UsageError("--rows-per-task expects between 1 and 100000");
    if (a.has("rows-per-task") && p.engine != "slurm") throw UsageError("--rows-per-task is for --engine slurm");
    if (a.has("gpus")) {
        std::stringstream in(a.get("gpus"));
        for (std::string g; std::getline(in, g, ',');)
            if (!trim(g).empty()) p.gpus.push_back(trim(g));
    }
    p.recipe = io::readRecipe(a.get("recipe"));
    // Cluster flags override the recipe's slurm section, checked by the same rules.
    Json slurm = Json::object();
    for (const auto& [flag, key] : std::vector<std::pair<std::string, std::string>>{
             {"partition", "partition"}, {"time", "time"}, {"mem", "memory"}, {"gpus-per-task", "gpus_per_task"},
             {"max-parallel", "max_parallel"}})
        if (a.has(flag)) {
            if (key == "gpus_per_task" || key == "max_parallel") slurm[key] = a.integer(flag, 0);
            else slurm[key] = a.get(flag);
        }
    if (!slurm.empty()) {
        const io::Recipe flags = io::parseRecipe(Json{{"reconstudio_recipe", 1}, {"slurm", slurm}}.dump(), "command line");
        io::SlurmResources& s = p.recipe.slurm;
        if (a.has("partition")) s.partition = flags.slurm.partition;
        if (a.has("time")) s.time = flags.slurm.time;
        if (a.has("mem")) s.memory = flags.slurm.memory;
        if (a.has("gpus-per-task")) s.gpus_per_task = flags.slurm.gpus_per_task;
        if (a.has("max-parallel")) s.max_parallel = flags.slurm.max_parallel;
    }
    if (p.engine == "slurm") slurmTool("sbatch");  // before anything is written
    p.rows = readManifest(a.get("manifest"));
    // Each row's effective recipe, checked before anything is written or run.
    std::vector<io::Recipe> row_recipes;
    for (Row& row : p.rows) {
        io::Recipe r = p.recipe;
        for (const auto& [key, value] : row.overrides)
            io::applyOverride(r, key, value, "manifest '" + a.get("manifest") + "', data set " + std::to_string(row.index + 1));
        row.hash = io::recipeHash(r);
        row_recipes.push_back(r);
    }
    const fs::path dir = fs::absolute(a.get("output-dir")).lexically_normal();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (!fs::is_directory(dir)) throw InputError("--output-dir '" + a.get("output-dir") + "' cannot be created: " + ec.message());
    p.dir = dir.string();
    if (fs::exists(p.path("batch.json"))) {
        // A re-run over the same data sets keeps the jobs already submitted. Their tasks
        // find rows by position in this plan, so another manifest must wait for them.
        std::optional<Plan> old;
        try {
            old = loadPlan(p.dir);
        } catch (const InputError&) {
        }
        auto same = [](const Row& x, const Row& y) { return x.name == y.name && x.input == y.input; };
        if (old && std::equal(old->rows.begin(), old->rows.end(), p.rows.begin(), p.rows.end(), same)) {
            p.slurm_jobs = old->slurm_jobs;
        } else if (old && old->engine == "slurm") {
            std::string ignored;
            for (const Result& r : collect(*old, &ignored))
                if (isActive(r.slurm_state))
                    throw InputError("'" + p.dir + "' has Slurm jobs of another manifest still queued or running; "
                                     "wait for them (batch status) or scancel them, or use another --output-dir");
        }
    }
    fs::create_directories(p.path("recipes"));
    io::writeRecipe(p.path("recipe.json"), p.recipe);
    for (std::size_t i = 0; i < p.rows.size(); ++i) io::writeRecipe(p.recipeFile(p.rows[i]), row_recipes[i]);
    savePlan(p);
    installStopHandlers();
    std::string note;
    return execute(p, rowsToDo(p, &note), note);
}

std::string folderArgument(const std::vector<std::string>& args, const char* command, std::vector<std::string>* rest) {
    if (args.empty() || args[0].rfind("--", 0) == 0) throw UsageError(std::string("batch ") + command + " needs the batch folder");
    rest->assign(args.begin() + 1, args.end());
    return args[0];
}

int cmdStatus(const std::vector<std::string>& args) {
    std::vector<std::string> rest;
    const Plan p = loadPlan(folderArgument(args, "status", &rest));
    Arguments(rest, {}, {});
    std::string note;
    const std::vector<Result> results = collect(p, &note);
    std::printf("%-5s %-24s %-8s %9s %9s %-10s %s\n", "row", "data set", "status", "seconds", "PSNR dB", "slurm", "message");
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        std::printf("%-5d %-24s %-8s %9s %9s %-10s %s\n", p.rows[i].index, p.rows[i].name.c_str(), r.status.c_str(),
                    r.status == "pending" ? "" : fixed(r.seconds, 2).c_str(), fixed(r.psnr_db, 2).c_str(),
                    r.slurm_state.c_str(), r.message.c_str());
    }
    return report(p, results, note);
}

int cmdRetry(const std::vector<std::string>& args) {
    std::vector<std::string> rest;
    Plan p = loadPlan(folderArgument(args, "retry", &rest));
    Arguments a(rest, {"jobs"}, {});
    if (a.has("jobs")) {
        p.workers = a.integer("jobs", 1);
        if (p.workers < 1 || p.workers > kMaxWorkers) throw UsageError("-j expects between 1 and " + std::to_string(kMaxWorkers));
    }
    installStopHandlers();
    std::string note;
    return execute(p, rowsToDo(p, &note), note);
}

int cmdTask(const std::vector<std::string>& args) {
    std::vector<std::string> rest;
    const Plan p = loadPlan(folderArgument(args, "task", &rest));
    Arguments a(rest, {"submission", "task"}, {});
    if (!a.has("submission") || !a.has("task")) throw UsageError("batch task needs --submission S --task T");
    const int s = a.integer("submission", -1), t = a.integer("task", -1);
    if (s < 0 || s >= int(p.slurm_jobs.size())) throw UsageError("batch task: no submission " + a.get("submission") + " in " + p.dir);
    const Plan::Submission& sub = p.slurm_jobs[std::size_t(s)];
    const int first = t * sub.rows_per_task;
    if (t < 0 || first >= int(sub.rows.size())) throw UsageError("batch task: submission " + a.get("submission") + " has no task " + a.get("task"));
    bool all_ok = true;
    for (int k = first; k < std::min<int>(first + sub.rows_per_task, int(sub.rows.size())); ++k) {
        auto it = std::find_if(p.rows.begin(), p.rows.end(), [&](const Row& r) { return r.index == sub.rows[std::size_t(k)]; });
        if (it == p.rows.end()) throw UsageError("batch task: no row " + std::to_string(sub.rows[std::size_t(k)]) + " in " + p.dir);
        if (isComplete(p, *it, loadResult(p, *it))) continue;
        const Result r = runRow(p, *it, {});
        std::fprintf(stderr, "%s: %s %.2f s %s\n", it->name.c_str(), r.status.c_str(), r.seconds, r.message.c_str());
        all_ok = all_ok && r.status == "ok";
    }
    return all_ok ? 0 : 1;
}

}  // namespace

int runBatchCommand(const std::vector<std::string>& raw) {
    // "-j N" / "-jN" as the long option the parser knows.
    std::vector<std::string> args;
    for (const auto& s : raw) {
        if (s == "-j") args.push_back("--jobs");
        else if (s.rfind("-j", 0) == 0 && s.size() > 2 && s[2] != '-') args.insert(args.end(), {"--jobs", s.substr(2)});
        else args.push_back(s);
    }
    if (!args.empty() && args[0] == "status") return cmdStatus({args.begin() + 1, args.end()});
    if (!args.empty() && args[0] == "retry") return cmdRetry({args.begin() + 1, args.end()});
    if (!args.empty() && args[0] == "task") return cmdTask({args.begin() + 1, args.end()});
    return cmdRun(args);
}

}  // namespace recon::cli
