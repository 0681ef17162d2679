#include "bulkhead/store/job_record.h"

namespace bulkhead {

const char* JobStateName(JobState s) {
  switch (s) {
    case JobState::kQueued:
      return "queued";
    case JobState::kScheduled:
      return "scheduled";
    case JobState::kRetry:
      return "retries";
    case JobState::kDead:
      return "dead";
    case JobState::kWorking:
      return "working";
  }
  return "unknown";
}

}  // namespace bulkhead
