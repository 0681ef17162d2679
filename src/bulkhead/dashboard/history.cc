#include "bulkhead/dashboard/history.h"

namespace bulkhead::dashboard {
namespace {

std::vector<ChartPoint> Rate(const std::deque<HistorySample>& samples,
                             int64_t HistorySample::*counter) {
  std::vector<ChartPoint> out;
  for (size_t i = 1; i < samples.size(); ++i) {
    const auto& a = samples[i - 1];
    const auto& b = samples[i];
    double secs = std::chrono::duration<double>(b.at - a.at).count();
    int64_t delta = b.*counter - a.*counter;
    out.push_back({b.at, secs > 0 && delta > 0 ? static_cast<double>(delta) / secs : 0});
  }
  return out;
}

}  // namespace

void History::Add(const HistorySample& s) {
  seconds_.push_back(s);
  if (seconds_.size() > kSeconds) seconds_.pop_front();
  if (minutes_.empty() || s.at - minutes_.back().at >= kMinute) {
    minutes_.push_back(s);
    if (minutes_.size() > kMinutes) minutes_.pop_front();
  }
}

std::vector<ChartPoint> History::ProcessedRate(const std::deque<HistorySample>& samples) {
  return Rate(samples, &HistorySample::processed);
}

std::vector<ChartPoint> History::FailureRate(const std::deque<HistorySample>& samples) {
  return Rate(samples, &HistorySample::failures);
}

std::vector<ChartPoint> History::Gauge(const std::deque<HistorySample>& samples,
                                       double (*read)(const HistorySample&)) {
  std::vector<ChartPoint> out;
  for (const auto& s : samples) out.push_back({s.at, read(s)});
  return out;
}

}  // namespace bulkhead::dashboard
