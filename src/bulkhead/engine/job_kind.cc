#include "bulkhead/engine/job_kind.h"

namespace bulkhead {

const char* JobKindName(JobKind kind) {
  switch (kind) {
    case JobKind::kWebPush:
      return "webpush";
    case JobKind::kActivityPub:
      return "activitypub";
    case JobKind::kWebhook:
      return "webhook";
  }
  return "unknown";
}

std::optional<JobKind> JobKindFromName(std::string_view name) {
  for (JobKind k : {JobKind::kWebPush, JobKind::kActivityPub, JobKind::kWebhook}) {
    if (name == JobKindName(k)) return k;
  }
  return std::nullopt;
}

}  // namespace bulkhead
