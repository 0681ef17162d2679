// History: the Overview's figures over time, kept in memory only (a restart starts afresh): the
// last 5 minutes at one sample a second and the last 4 hours at one a minute. The dashboard's
// sampler (dashboard.h) adds a sample every second on the event loop. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "bulkhead/util/clock.h"

namespace bulkhead::dashboard {

struct HistorySample {
  TimePoint at{};
  int64_t processed = 0;  // counters since the store began (INFO's total_processed)
  int64_t failures = 0;
  int64_t retries = 0;         // retry-set size
  int64_t parked = 0;          // deliveries parked behind their host
  double latency_seconds = 0;  // the largest queue latency
};

// A point of a chart series.
struct ChartPoint {
  TimePoint at{};
  double value = 0;
};

class History {
 public:
  static constexpr size_t kSeconds = 301;  // 300 one-second intervals
  static constexpr size_t kMinutes = 241;  // 240 one-minute intervals
  static constexpr Duration kMinute = std::chrono::minutes(1);

  void Add(const HistorySample& s);
  const std::deque<HistorySample>& seconds() const { return seconds_; }
  const std::deque<HistorySample>& minutes() const { return minutes_; }

  // Processed and failed jobs per second between consecutive samples (counters that went down,
  // as after a FLUSH, give 0).
  static std::vector<ChartPoint> ProcessedRate(const std::deque<HistorySample>& samples);
  static std::vector<ChartPoint> FailureRate(const std::deque<HistorySample>& samples);
  // A gauge of each sample.
  static std::vector<ChartPoint> Gauge(const std::deque<HistorySample>& samples,
                                       double (*read)(const HistorySample&));

 private:
  std::deque<HistorySample> seconds_;
  std::deque<HistorySample> minutes_;
};

}  // namespace bulkhead::dashboard
