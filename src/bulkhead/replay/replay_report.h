// What one replay run measured, and the pure functions that turn it into the table, the verdicts,
// the per-second series and the CSV. No I/O here, so the verdict rules are unit-tested exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/replay/fault.h"

namespace bulkhead {

// One timeline job as the worker saw it (steady-clock microseconds).
struct TimelineRecord {
  int64_t created_us = 0;  // PUSH by the load generator
  int64_t start_us = 0;    // the worker began it
  int64_t end_us = 0;
};

// One Web Push job meant for the healthy endpoint.
struct DeliveryRecord {
  int64_t pushed_us = 0;
  std::optional<int64_t> arrived_us;  // nullopt: never arrived
};

// The server's state, sampled about once a second (from INFO).
struct ServerSample {
  double t_s = 0;         // since the load started
  int64_t retry_set = 0;  // jobs in the retry set
  int64_t dead_set = 0;
  int64_t faulty_parked = 0;  // the faulty host's parked jobs
  int64_t faulty_failures = 0;
  double queue_latency_ms = 0;  // age of the oldest job waiting in `default` (QUEUE LATENCY)
  std::string faulty_breaker;   // "closed", "open", "half_open", or "" when not listed
};

struct ScenarioResult {
  std::string name;  // "baseline" or the fault's name
  Fault fault = Fault::kNone;
  double duration_s = 0;  // load duration
  int64_t t0_us = 0;      // load start (steady clock)

  int64_t timeline_enqueued = 0;
  std::vector<TimelineRecord> timeline;
  // Jobs enqueued that never ran by end_us (a stalled pool): their latency counts as at least
  // end_us - created_us, so a stall shows in the percentiles instead of vanishing from them.
  std::vector<int64_t> timeline_unrun_created_us;
  int64_t end_us = 0;        // when the results were collected
  int64_t foreign_jobs = 0;  // jobs of another type that reached the worker (must stay 0)

  std::vector<DeliveryRecord> healthy;
  int64_t faulty_pushed = 0;
  int64_t faulty_requests = 0;  // requests the faulty endpoint read
  std::vector<ServerSample> samples;
};

struct LatencySummary {
  size_t count = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
};

// Nearest-rank percentiles of `ms` (empty: all zero).
LatencySummary Summarize(std::vector<double> ms);

// Timeline queue latency (start - created) of every job enqueued, in ms; for jobs that never ran,
// end_us - created_us (a lower bound).
std::vector<double> TimelineLatenciesMs(const ScenarioResult& r);
// PUSH → arrival of every healthy delivery that arrived, in ms.
std::vector<double> HealthyLatenciesMs(const ScenarioResult& r);

struct ReplayThresholds {
  double timeline_p99_ms = 50;  // absolute bound on timeline p99
  double baseline_ratio = 2.0;  // fault p99 ≤ ratio × baseline p99
  // Below this, p99s are scheduler noise on a loaded machine: the ratio's denominator is at least
  // this (documented in docs/incident.md).
  double ratio_floor_ms = 5.0;
  double healthy_within_ms = 1000;  // a healthy delivery is on time within this
  double healthy_on_time_fraction = 0.99;
};

struct Verdict {
  bool pass = false;
  std::string text;  // e.g. "timeline p99 3.1 ms <= 50 ms"
};

// The verdict lines for the fault run (and against the baseline run when given).
std::vector<Verdict> Verdicts(const ScenarioResult& run, const ScenarioResult* baseline,
                              const ReplayThresholds& thresholds = {});
bool AllPass(const std::vector<Verdict>& verdicts);

// One row per second of the load: what the chart draws.
struct SecondPoint {
  int second = 0;
  int64_t retry_set = 0;  // last sample taken in that second (carried forward)
  int64_t faulty_parked = 0;
  double queue_latency_ms = 0;            // last sample taken in that second (carried forward)
  std::optional<double> timeline_p99_ms;  // wait of the jobs started in that second
  std::optional<double> timeline_max_ms;
  std::optional<double> healthy_p99_ms;  // of healthy pushes in that second
  int64_t healthy_missing = 0;           // healthy pushes in that second that never arrived
};
std::vector<SecondPoint> PerSecond(const ScenarioResult& r);
// What the chart's bar shows for a second: the timeline queue latency an operator would see, the
// larger of the p99 wait of the jobs started then and the sampled age of the oldest waiting job
// (a stalled pool starts none, yet its queue keeps ageing). nullopt when there is neither.
std::optional<double> TimelineQueueLatencyMs(const SecondPoint& p);

// The text table: one column per run (baseline first when given).
std::string FormatTable(const ScenarioResult& run, const ScenarioResult* baseline);
// The same rows for any runs side by side, in the order given (no ratio row).
std::string FormatColumns(const std::vector<const ScenarioResult*>& runs);
// The per-second series as CSV with a header line.
std::string FormatCsv(const std::vector<SecondPoint>& points);
// A JSON summary of the runs and verdicts (for tools and CI logs).
std::string FormatSummaryJson(const ScenarioResult& run, const ScenarioResult* baseline,
                              const std::vector<Verdict>& verdicts);

}  // namespace bulkhead
