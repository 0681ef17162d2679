#include "bulkhead/metrics/node_metrics.h"

#include <algorithm>
#include <array>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {

namespace mn = metric_names;

bool IsPerNodeMetric(std::string_view family) {
  // Read from the store (the engine snapshot's store figures): the same on every node.
  static constexpr std::array kClusterWide = {
      mn::kQueueSize,
      mn::kQueueLatencySeconds,
      mn::kRetrySetSize,
      mn::kScheduledSetSize,
      mn::kDeadSetSize,
      mn::kWorkingJobs,
      mn::kOldestWorkingJobSeconds,
      mn::kJobsProcessedTotal,
      mn::kJobsFailedTotal,
      // Read from the application's Redis: the same on every node.
      mn::kSidekiqQueueSize,
      mn::kSidekiqQueueLatencySeconds,
  };
  return std::find(kClusterWide.begin(), kClusterWide.end(), family) == kClusterWide.end();
}

}  // namespace bulkhead
