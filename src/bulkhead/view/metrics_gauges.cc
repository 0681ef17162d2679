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

// Where the callbacks read: the latest snapshot, while it is fresh enough.
struct Source {
  const PublishedSnapshot& published;
  const Clock& clock;
  Duration max_age;
};

// A callback over the latest snapshot; Unavailable before the first publication and when the
// latest is older than max_age (unless `any_age`: figures that cannot go stale).
SampleCallback FromLatest(const Source& src, std::function<Samples(const EngineSnapshot&)> read,
                          bool any_age = false) {
  return [src, read = std::move(read), any_age]() -> Samples {
    Snapshot s = src.published.Latest();
    if (!s) return Status::Unavailable("no engine snapshot published yet");
    Duration age = src.clock.Now() - s->now;
    if (!any_age && age > src.max_age) {
      auto seconds = std::chrono::duration_cast<std::chrono::seconds>(age).count();
      return Status::Unavailable("the event loop has published no engine snapshot for " +
                                 std::to_string(seconds) + " s");
    }
    return read(*s);
  };
}

SampleCallback Scalar(const Source& src, double (*pick)(const EngineSnapshot&)) {
  return FromLatest(src, [pick](const EngineSnapshot& s) { return One(pick(s)); });
}

}  // namespace

Status RegisterEngineMetrics(Registry& registry, const PublishedSnapshot& published,
                             const Clock& clock, Duration max_age) {
  const Source src{published, clock, max_age};
  const std::vector<std::string> queue_label{std::string(mn::kLabelQueue)};
  auto per_queue = [&](bool latency) {
    return FromLatest(src, [&clock, latency](const EngineSnapshot& s) -> Samples {
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
  gauge(mn::kRetrySetSize, mn::kRetrySetSizeHelp, FromLatest(src, size(&EngineSnapshot::retries)));
  gauge(mn::kScheduledSetSize, mn::kScheduledSetSizeHelp,
        FromLatest(src, size(&EngineSnapshot::scheduled)));
  gauge(mn::kDeadSetSize, mn::kDeadSetSizeHelp, FromLatest(src, size(&EngineSnapshot::dead)));
  gauge(mn::kWorkingJobs, mn::kWorkingJobsHelp, FromLatest(src, size(&EngineSnapshot::working)));
  gauge(mn::kWorkersConnected, mn::kWorkersConnectedHelp,
        FromLatest(src, size(&EngineSnapshot::worker_count)));
  counter(mn::kJobsProcessedTotal, mn::kJobsProcessedTotalHelp,
          Scalar(src, [](const EngineSnapshot& s) { return double(s.processed); }));
  counter(mn::kJobsFailedTotal, mn::kJobsFailedTotalHelp,
          Scalar(src, [](const EngineSnapshot& s) { return double(s.failures); }));
  counter(mn::kPushDuplicatesTotal, mn::kPushDuplicatesTotalHelp,
          Scalar(src, [](const EngineSnapshot& s) { return double(s.push_duplicates); }));
  gauge(mn::kStoreDegraded, mn::kStoreDegradedHelp,
        Scalar(src, [](const EngineSnapshot& s) { return s.store_degraded ? 1.0 : 0.0; }));
  gauge(mn::kBuildInfo, mn::kBuildInfoHelp,
        []() -> Samples {
          return std::vector<MetricSample>{MetricSample{{BULKHEAD_VERSION}, 1}};
        },
        {std::string(mn::kLabelVersion)});
  gauge(mn::kStartTimeSeconds, mn::kStartTimeSecondsHelp,
        FromLatest(
            src, [](const EngineSnapshot& s) { return One(ToUnixMicros(s.started_at) / 1e6); },
            /*any_age=*/true));
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
