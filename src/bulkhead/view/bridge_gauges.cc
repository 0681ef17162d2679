#include "bulkhead/view/bridge_gauges.h"

#include <algorithm>
#include <string>
#include <vector>

#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/view/fresh_figures.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;
using Samples = Result<std::vector<MetricSample>>;
using Source = FreshSource<BridgeSnapshot>;

// What a family reads: one unlabelled value, or one value per Sidekiq queue (`age`: seconds
// since the queues were read).
struct BridgeFamily {
  MetricType type;
  std::string_view name, help;
  double (*value)(const BridgeSnapshot&) = nullptr;
  double (*per_queue)(const SidekiqQueueFigures&, double age) = nullptr;
};

double Up(const BridgeSnapshot& b) { return b.up ? 1 : 0; }
double Taken(const BridgeSnapshot& b) { return static_cast<double>(b.taken); }
double Repeats(const BridgeSnapshot& b) { return static_cast<double>(b.repeats); }
double Dead(const BridgeSnapshot& b) { return static_cast<double>(b.dead); }
double Reaped(const BridgeSnapshot& b) { return static_cast<double>(b.reaped); }
double Written(const BridgeSnapshot& b) { return static_cast<double>(b.outcomes_written); }
double InProgress(const BridgeSnapshot& b) { return static_cast<double>(b.in_progress); }
double Size(const SidekiqQueueFigures& q, double) { return static_cast<double>(q.size); }
double Latency(const SidekiqQueueFigures& q, double age) {
  return q.size > 0 ? q.latency_seconds + age : 0;
}

const BridgeFamily kBridgeFamilies[] = {
    {MetricType::kGauge, mn::kSidekiqBridgeUp, mn::kSidekiqBridgeUpHelp, Up},
    {MetricType::kCounter, mn::kSidekiqTakenTotal, mn::kSidekiqTakenTotalHelp, Taken},
    {MetricType::kCounter, mn::kSidekiqRepeatsTotal, mn::kSidekiqRepeatsTotalHelp, Repeats},
    {MetricType::kCounter, mn::kSidekiqDeadTotal, mn::kSidekiqDeadTotalHelp, Dead},
    {MetricType::kCounter, mn::kSidekiqReapedTotal, mn::kSidekiqReapedTotalHelp, Reaped},
    {MetricType::kCounter, mn::kSidekiqOutcomesWrittenTotal, mn::kSidekiqOutcomesWrittenTotalHelp,
     Written},
    {MetricType::kGauge, mn::kSidekiqInProgress, mn::kSidekiqInProgressHelp, InProgress},
    {MetricType::kGauge, mn::kSidekiqQueueSize, mn::kSidekiqQueueSizeHelp, nullptr, Size},
    {MetricType::kGauge, mn::kSidekiqQueueLatencySeconds, mn::kSidekiqQueueLatencySecondsHelp,
     nullptr, Latency},
};

}  // namespace

Status RegisterBridgeGauges(Registry& registry, const Published<BridgeSnapshot>& published,
                            const Clock& clock, Duration max_age) {
  const Source src{published, &BridgeSnapshot::now, clock, max_age, "sidekiq bridge snapshot"};
  for (const BridgeFamily& f : kBridgeFamilies) {
    std::vector<std::string> labels;
    if (f.per_queue) labels.emplace_back(mn::kLabelQueue);
    Status s =
        registry.AddCallback(f.type, f.name, f.help, std::move(labels), [src, f]() -> Samples {
          auto latest = LatestFresh(src);
          if (!latest.ok()) return latest.status();
          const BridgeSnapshot& b = **latest;
          if (!f.per_queue) return std::vector<MetricSample>{MetricSample{{}, f.value(b)}};
          double age =
              std::max(0.0, std::chrono::duration<double>(src.clock.Now() - b.polled_at).count());
          std::vector<MetricSample> out;
          for (const SidekiqQueueFigures& q : b.queues) {
            out.push_back(MetricSample{{q.name}, f.per_queue(q, age)});
          }
          return out;
        });
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void RemoveBridgeGauges(Registry& registry) {
  for (const BridgeFamily& f : kBridgeFamilies) (void)registry.RemoveCallback(f.name);
}

}  // namespace bulkhead
