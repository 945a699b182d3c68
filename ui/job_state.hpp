// The state of the workstation's one reconstruction job, as 3D Slicer models a
// long task: widgets observe it instead of asking the worker thread.
#pragma once

#include <QString>

namespace studio {

enum class JobState {
    Idle,        // nothing has run yet
    Running,     // loading, gridding or solving on the worker thread
    Cancelling,  // cancel requested; the worker stops at its next check
    Cancelled,   // stopped early; the last complete image is kept
    Completed,
    Failed,      // the error message was reported through failed()
};

QString toString(JobState s);
// True while the worker is busy with the job (a new request supersedes it).
inline bool isActive(JobState s) { return s == JobState::Running || s == JobState::Cancelling; }

}  // namespace studio
