// What every FFTW plan of the engine shares (recon/nufft only; callers use FftPlan and
// PaddedConvolution): the planner's lock (FFTW's planner is not thread-safe), its threads,
// the planning rigour and the wisdom saved per machine.
//
// Plans are chosen by measurement (FFTW_MEASURE, at most kPlanningSeconds each) and the
// choices are kept as FFTW "wisdom" in the user's cache folder, one file per host and
// precision ($XDG_CACHE_HOME or ~/.cache, reconstudio/fftw-wisdom-HOST-f32|f64), so only
// a machine's first run of a size pays for the measuring. RECONSTUDIO_FFTW_WISDOM=0
// plans by FFTW's estimate instead, reading and writing no file; =PATH uses that folder.
// A damaged wisdom file is ignored with a note on stderr, and replaced.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

namespace recon::fftw {

std::mutex& plannerMutex();
// Threads and wisdom set up (once per process); call with the planner's lock held.
void prepare();
// FFTW_MEASURE for a transform of `points` values, or FFTW_ESTIMATE where wisdom is
// disabled or the transform is larger than kMeasureLimit (measuring would fill a scratch
// buffer of its size, and take longest where a first run can least afford it).
unsigned planningFlags(std::size_t points);
// After planning (the lock held): writes the wisdom file again if planning added to it.
void savePlans();
// The wisdom files' folder the environment asks for, or "" when wisdom is disabled.
std::string wisdomFolder();
// Keeps wisdom in `folder` from now on ("": plans by estimate, no files): forgets what was
// loaded and reads that folder's files (the lock held). prepare() calls it with wisdomFolder().
void useWisdomFolder(const std::string& folder);
// The wisdom file of one precision in the folder in use.
std::string wisdomPath(bool single_precision);

// A measuring planner may take this long per plan before it settles for the best so far.
constexpr double kPlanningSeconds = 2.0;
constexpr std::size_t kMeasureLimit = std::size_t(1) << 24;  // 256^3

}  // namespace recon::fftw
