#include "bulkhead/view/metrics_gauges.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/view/fresh_figures.h"
#include "bulkhead/view/throttle_view.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;
using Samples = Result<std::vector<MetricSample>>;
using Source = FreshSource<EngineSnapshot>;

// A callback over the latest snapshot while it is fresh (view/fresh_figures.h).
SampleCallback FromLatest(const Source& src, std::function<Samples(const EngineSnapshot&)> read) {
  return [src, read = std::move(read)]() -> Samples {
    auto latest = LatestFresh(src);
    if (!latest.ok()) return latest.status();
    return read(**latest);
  };
}

// One unlabelled sample: `pick` is a field of the snapshot (numeric or bool) or a function of it.
template <typename Pick>
SampleCallback Value(const Source& src, Pick pick) {
  return FromLatest(src, [pick](const EngineSnapshot& s) -> Samples {
    return std::vector<MetricSample>{MetricSample{{}, static_cast<double>(std::invoke(pick, s))}};
  });
}

// One sample per queue: its size, or its head's latency aged by the snapshot's age at collection
// (so it keeps climbing between publications; 0 for an empty queue).
SampleCallback PerQueue(const Source& src, bool latency) {
  return FromLatest(src, [&clock = src.clock, latency](const EngineSnapshot& s) -> Samples {
    double age = std::max(0.0, std::chrono::duration<double>(clock.Now() - s.now).count());
    std::vector<MetricSample> out;
    for (const auto& [name, q] : s.queues) {
      double v = static_cast<double>(q.size);
      if (latency) v = q.size > 0 ? q.latency_seconds + age : 0;
      out.push_back(MetricSample{{name}, v});
    }
    return out;
  });
}

// One sample per queue throttle (view/throttle_view.h).
SampleCallback PerThrottle(const Source& src, ThrottleFigure figure) {
  return FromLatest(src, [figure](const EngineSnapshot& s) -> Samples {
    return ThrottleSamples(s.throttles, figure);
  });
}

// One sample per key of a map of the snapshot (expired jobs by queue, cron entries).
template <typename Read>
SampleCallback PerKey(const Source& src, Read read) {
  return FromLatest(src, [read](const EngineSnapshot& s) -> Samples {
    std::vector<MetricSample> out;
    for (auto [key, value] : read(s)) out.push_back(MetricSample{{key}, value});
    return out;
  });
}

// A count of every cron entry, by entry name.
std::vector<std::pair<std::string, double>> CronFigures(const EngineSnapshot& e,
                                                        int64_t CronEntrySnapshot::*field) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& c : e.cron) out.emplace_back(c.name, static_cast<double>(c.*field));
  return out;
}

// The batch counters, one sample per event.
SampleCallback BatchEvents(const Source& src) {
  return FromLatest(src, [](const EngineSnapshot& s) -> Samples {
    const BatchCounts& b = s.batches;
    return std::vector<MetricSample>{MetricSample{{"created"}, static_cast<double>(b.created)},
                                     MetricSample{{"committed"}, static_cast<double>(b.committed)},
                                     MetricSample{{"expired"}, static_cast<double>(b.expired)},
                                     MetricSample{{"succeeded"}, static_cast<double>(b.succeeded)}};
  });
}

// Every family: RegisterEngineMetrics adds them, UnregisterEngineMetrics removes them.
struct FamilyRow {
  MetricType type;
  std::string_view name, help;
  std::string_view label;  // empty: no label
  SampleCallback (*read)(const Source&);
};
constexpr MetricType kGauge = MetricType::kGauge;
constexpr MetricType kCounter = MetricType::kCounter;
const FamilyRow kFamilies[] = {
    {kGauge, mn::kQueueSize, mn::kQueueSizeHelp, mn::kLabelQueue,
     [](const Source& s) { return PerQueue(s, /*latency=*/false); }},
    {kGauge, mn::kQueueLatencySeconds, mn::kQueueLatencySecondsHelp, mn::kLabelQueue,
     [](const Source& s) { return PerQueue(s, /*latency=*/true); }},
    {kGauge,
     mn::kRetrySetSize,
     mn::kRetrySetSizeHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::retries); }},
    {kGauge,
     mn::kScheduledSetSize,
     mn::kScheduledSetSizeHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::scheduled); }},
    {kGauge,
     mn::kDeadSetSize,
     mn::kDeadSetSizeHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::dead); }},
    {kGauge,
     mn::kWorkingJobs,
     mn::kWorkingJobsHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::working); }},
    {kGauge,
     mn::kWorkersConnected,
     mn::kWorkersConnectedHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::worker_count); }},
    {kCounter,
     mn::kJobsProcessedTotal,
     mn::kJobsProcessedTotalHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::processed); }},
    {kCounter,
     mn::kJobsFailedTotal,
     mn::kJobsFailedTotalHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::failures); }},
    {kCounter,
     mn::kPushDuplicatesTotal,
     mn::kPushDuplicatesTotalHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::push_duplicates); }},
    // Unique, expiring and cron jobs.
    {kCounter,
     mn::kUniqueLocksTotal,
     mn::kUniqueLocksTotalHelp,
     {},
     [](const Source& s) {
       return Value(s, [](const EngineSnapshot& e) { return e.unique.taken; });
     }},
    {kCounter,
     mn::kUniqueDeniedTotal,
     mn::kUniqueDeniedTotalHelp,
     {},
     [](const Source& s) {
       return Value(s, [](const EngineSnapshot& e) { return e.unique.denied; });
     }},
    {kCounter, mn::kJobsExpiredTotal, mn::kJobsExpiredTotalHelp, mn::kLabelQueue,
     [](const Source& s) {
       return PerKey(s, [](const EngineSnapshot& e) {
         std::vector<std::pair<std::string, double>> out;
         for (const auto& [queue, n] : e.jobs_expired) out.emplace_back(queue, n);
         return out;
       });
     }},
    {kCounter, mn::kCronEnqueuedTotal, mn::kCronEnqueuedTotalHelp, mn::kLabelEntry,
     [](const Source& s) {
       return PerKey(
           s, [](const EngineSnapshot& e) { return CronFigures(e, &CronEntrySnapshot::enqueued); });
     }},
    {kCounter, mn::kCronLostTotal, mn::kCronLostTotalHelp, mn::kLabelEntry,
     [](const Source& s) {
       return PerKey(
           s, [](const EngineSnapshot& e) { return CronFigures(e, &CronEntrySnapshot::lost); });
     }},
    {kGauge, mn::kCronNextRunSeconds, mn::kCronNextRunSecondsHelp, mn::kLabelEntry,
     [](const Source& s) {
       return PerKey(s, [](const EngineSnapshot& e) {
         std::vector<std::pair<std::string, double>> out;
         for (const auto& c : e.cron) out.emplace_back(c.name, ToUnixMicros(c.next_run) / 1e6);
         return out;
       });
     }},
    {kCounter, mn::kBatchesTotal, mn::kBatchesTotalHelp, mn::kLabelEvent, BatchEvents},
    {kGauge,
     mn::kStoreDegraded,
     mn::kStoreDegradedHelp,
     {},
     [](const Source& s) { return Value(s, &EngineSnapshot::store_degraded); }},
    // Queue throttling.
    {kGauge, mn::kThrottleLimit, mn::kThrottleLimitHelp, mn::kLabelQueue,
     [](const Source& s) { return PerThrottle(s, ThrottleFigure::kLimit); }},
    {kGauge, mn::kThrottleInUse, mn::kThrottleInUseHelp, mn::kLabelQueue,
     [](const Source& s) { return PerThrottle(s, ThrottleFigure::kInUse); }},
    {kGauge, mn::kThrottleWorkerMaxInUse, mn::kThrottleWorkerMaxInUseHelp, mn::kLabelQueue,
     [](const Source& s) { return PerThrottle(s, ThrottleFigure::kWorkerMaxInUse); }},
    // Needs no snapshot.
    {kGauge, mn::kBuildInfo, mn::kBuildInfoHelp, mn::kLabelVersion,
     [](const Source&) -> SampleCallback {
       return []() -> Samples {
         return std::vector<MetricSample>{MetricSample{{BULKHEAD_VERSION}, 1}};
       };
     }},
    // Cannot go stale: shown from a snapshot of any age.
    {kGauge,
     mn::kStartTimeSeconds,
     mn::kStartTimeSecondsHelp,
     {},
     [](const Source& s) {
       Source any_age = s;
       any_age.max_age = Duration::max();
       return Value(any_age,
                    [](const EngineSnapshot& e) { return ToUnixMicros(e.started_at) / 1e6; });
     }},
};

}  // namespace

Status RegisterEngineMetrics(Registry& registry, const Published<EngineSnapshot>& published,
                             const Clock& clock, Duration max_age) {
  const Source src{published, &EngineSnapshot::now, clock, max_age, "engine snapshot"};
  Status first = Status::Ok();
  for (const FamilyRow& f : kFamilies) {
    std::vector<std::string> labels;
    if (!f.label.empty()) labels.emplace_back(f.label);
    Status s = registry.AddCallback(f.type, f.name, f.help, std::move(labels), f.read(src));
    if (first.ok()) first = s;
  }
  return first;
}

void UnregisterEngineMetrics(Registry& registry) {
  for (const FamilyRow& f : kFamilies) {
    (void)registry.RemoveCallback(f.name);  // NotFound for one never added: nothing to do
  }
}

}  // namespace bulkhead
