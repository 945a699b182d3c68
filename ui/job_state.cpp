#include "ui/job_state.hpp"

namespace studio {

QString toString(JobState s) {
    switch (s) {
        case JobState::Idle: return QStringLiteral("idle");
        case JobState::Running: return QStringLiteral("running");
        case JobState::Cancelling: return QStringLiteral("cancelling");
        case JobState::Cancelled: return QStringLiteral("cancelled");
        case JobState::Completed: return QStringLiteral("completed");
        case JobState::Failed: return QStringLiteral("failed");
    }
    return QStringLiteral("unknown");
}

}  // namespace studio
