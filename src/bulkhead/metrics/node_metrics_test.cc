#include "bulkhead/metrics/node_metrics.h"

#include <gtest/gtest.h>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

TEST(NodeMetricsTest, TheStoreFiguresAreClusterWideTheRestPerNode) {
  for (std::string_view cluster_wide :
       {mn::kQueueSize, mn::kQueueLatencySeconds, mn::kRetrySetSize, mn::kScheduledSetSize,
        mn::kDeadSetSize, mn::kWorkingJobs, mn::kJobsProcessedTotal, mn::kJobsFailedTotal}) {
    EXPECT_FALSE(IsPerNodeMetric(cluster_wide)) << cluster_wide;
  }
  for (std::string_view per_node :
       {mn::kWorkersConnected, mn::kConnectionsShedTotal, mn::kLoginFailuresTotal,
        mn::kHostInflight, mn::kHostBreakerOpen, mn::kDeliveriesTotal, mn::kParkedJobs,
        mn::kJobRuntimeSeconds, mn::kStoreUp, mn::kBuildInfo, mn::kStartTimeSeconds,
        mn::kPushDuplicatesTotal}) {
    EXPECT_TRUE(IsPerNodeMetric(per_node)) << per_node;
  }
}

}  // namespace
}  // namespace bulkhead
