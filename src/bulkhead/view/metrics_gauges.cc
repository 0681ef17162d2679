#include "bulkhead/view/metrics_gauges.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;
using Samples = Result<std::vector<MetricSample>>;
using Snapshot = std::shared_ptr<const EngineSnapshot>;

Samples One(double v) { return std::vector<MetricSample>{MetricSample{{}, v}}; }

// A callback over the latest snapshot; Unavailable before the first publication.
SampleCallback FromLatest(const PublishedSnapshot& published,
                          std::function<Samples(const EngineSnapshot&)> read) {
  return [&published, read = std::move(read)]() -> Samples {
    Snapshot s = published.Latest();
    if (!s) return Status::Unavailable("no engine snapshot published yet");
    return read(*s);
  };
}

SampleCallback Scalar(const PublishedSnapshot& published, double (*pick)(const EngineSnapshot&)) {
  return FromLatest(published, [pick](const EngineSnapshot& s) { return One(pick(s)); });
}

}  // namespace

Status RegisterEngineMetrics(Registry& registry, const PublishedSnapshot& published,
                             const Clock& clock) {
  const std::vector<std::string> queue_label{std::string(mn::kLabelQueue)};
  auto per_queue = [&](bool latency) {
    return FromLatest(published, [&clock, latency](const EngineSnapshot& s) -> Samples {
      double age = std::max(0.0, std::chrono::duration<double>(clock.Now() - s.now).count());
      std::vector<MetricSample> out;
      for (const auto& [name, q] : s.queues) {
        double v = static_cast<double>(q.size);
        if (latency) v = q.size > 0 ? q.latency_seconds + age : 0;
        out.push_back(MetricSample{{name}, v});
      }
      return out;
    });
  };
  auto size = [](size_t EngineSnapshot::*field) {
    return [field](const EngineSnapshot& s) { return One(static_cast<double>(s.*field)); };
  };
  std::vector<Status> results;
  auto gauge = [&](std::string_view name, std::string_view help, SampleCallback cb,
                   std::vector<std::string> labels = {}) {
    results.push_back(registry.AddCallbackGauge(name, help, std::move(labels), std::move(cb)));
  };
  auto counter = [&](std::string_view name, std::string_view help, SampleCallback cb) {
    results.push_back(registry.AddCallback(MetricType::kCounter, name, help, {}, std::move(cb)));
  };
  gauge(mn::kQueueSize, mn::kQueueSizeHelp, per_queue(false), queue_label);
  gauge(mn::kQueueLatencySeconds, mn::kQueueLatencySecondsHelp, per_queue(true), queue_label);
  gauge(mn::kRetrySetSize, mn::kRetrySetSizeHelp,
        FromLatest(published, size(&EngineSnapshot::retries)));
  gauge(mn::kScheduledSetSize, mn::kScheduledSetSizeHelp,
        FromLatest(published, size(&EngineSnapshot::scheduled)));
  gauge(mn::kDeadSetSize, mn::kDeadSetSizeHelp, FromLatest(published, size(&EngineSnapshot::dead)));
  gauge(mn::kWorkingJobs, mn::kWorkingJobsHelp,
        FromLatest(published, size(&EngineSnapshot::working)));
  gauge(mn::kWorkersConnected, mn::kWorkersConnectedHelp,
        FromLatest(published, size(&EngineSnapshot::worker_count)));
  counter(mn::kJobsProcessedTotal, mn::kJobsProcessedTotalHelp,
          Scalar(published, [](const EngineSnapshot& s) { return double(s.processed); }));
  counter(mn::kJobsFailedTotal, mn::kJobsFailedTotalHelp,
          Scalar(published, [](const EngineSnapshot& s) { return double(s.failures); }));
  counter(mn::kPushDuplicatesTotal, mn::kPushDuplicatesTotalHelp,
          Scalar(published, [](const EngineSnapshot& s) { return double(s.push_duplicates); }));
  gauge(mn::kStoreDegraded, mn::kStoreDegradedHelp,
        Scalar(published, [](const EngineSnapshot& s) { return s.store_degraded ? 1.0 : 0.0; }));
  gauge(mn::kBuildInfo, mn::kBuildInfoHelp,
        []() -> Samples {
          return std::vector<MetricSample>{MetricSample{{BULKHEAD_VERSION}, 1}};
        },
        {std::string(mn::kLabelVersion)});
  gauge(
      mn::kStartTimeSeconds, mn::kStartTimeSecondsHelp,
      Scalar(published, [](const EngineSnapshot& s) { return ToUnixMicros(s.started_at) / 1e6; }));
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void UnregisterEngineMetrics(Registry& registry) {
  for (auto name :
       {mn::kQueueSize, mn::kQueueLatencySeconds, mn::kRetrySetSize, mn::kScheduledSetSize,
        mn::kDeadSetSize, mn::kWorkingJobs, mn::kWorkersConnected, mn::kJobsProcessedTotal,
        mn::kJobsFailedTotal, mn::kPushDuplicatesTotal, mn::kBuildInfo, mn::kStartTimeSeconds,
        mn::kStoreDegraded}) {
    registry.RemoveCallback(name);  // NotFound for one never added: nothing to do
  }
}

}  // namespace bulkhead
