#include "bulkhead/compartment/adaptive_limit.h"

#include <algorithm>
#include <cmath>

namespace bulkhead {
namespace {

AdaptiveLimitConfig Sanitize(AdaptiveLimitConfig c) {
  c.min_limit = std::max(1, c.min_limit);
  c.max_limit = std::max(c.min_limit, c.max_limit);
  c.initial_limit = std::clamp(c.initial_limit, c.min_limit, c.max_limit);
  c.decrease_factor = std::clamp(c.decrease_factor, 0.1, 0.95);
  c.additive_increase = std::max(0.0, c.additive_increase);
  c.baseline_window = std::max<size_t>(1, c.baseline_window);
  return c;
}

}  // namespace

AdaptiveLimit::AdaptiveLimit(const AdaptiveLimitConfig& config)
    : config_(Sanitize(config)),
      min_(config_.min_limit),
      max_(config_.max_limit),
      limit_(config_.initial_limit) {}

int AdaptiveLimit::limit() const {
  return std::clamp(static_cast<int>(std::floor(limit_)), min_, max_);
}

void AdaptiveLimit::SetNodes(int nodes) {
  nodes = std::max(1, nodes);
  if (nodes == nodes_) return;
  min_ = std::max(1, config_.min_limit / nodes);
  max_ = std::max(min_, config_.max_limit / nodes);
  limit_ = std::clamp(limit_ * nodes_ / nodes, double(min_), double(max_));
  nodes_ = nodes;
}

Duration AdaptiveLimit::baseline() const {
  if (recent_success_latency_.empty()) return Duration::zero();
  return *std::min_element(recent_success_latency_.begin(), recent_success_latency_.end());
}

bool AdaptiveLimit::IsSlow(Duration latency) const {
  if (latency > config_.latency_threshold) return true;
  if (config_.baseline_tolerance <= 0 || recent_success_latency_.empty()) return false;
  if (latency <= config_.baseline_min_significant) return false;
  const double base = static_cast<double>(baseline().count());
  return static_cast<double>(latency.count()) > base * config_.baseline_tolerance;
}

void AdaptiveLimit::OnResult(LimitSignal signal, Duration latency, TimePoint now, int in_flight) {
  const TimePoint started = now - latency;
  switch (signal) {
    case LimitSignal::kIgnore:
      return;
    case LimitSignal::kCongestion:
      Decrease(started, now);
      return;
    case LimitSignal::kSuccess:
      break;
  }
  // Judge against the baseline before this sample joins it.
  const bool slow = IsSlow(latency);
  recent_success_latency_.push_back(latency);
  if (recent_success_latency_.size() > config_.baseline_window) recent_success_latency_.pop_front();
  if (slow) {
    Decrease(started, now);
    return;
  }
  // +1 per limit's worth of successes, only while the cap is actually in use: in flight before this
  // attempt finished (in_flight + 1) is at least half the limit.
  if (2.0 * (in_flight + 1) >= limit_) {
    limit_ = std::min<double>(max_, limit_ + config_.additive_increase / limit_);
  }
}

void AdaptiveLimit::Decrease(TimePoint started, TimePoint now) {
  // Already reacted to congestion seen by attempts of this window.
  if (decreased_ && started < last_decrease_) return;
  limit_ = std::max<double>(min_, limit_ * config_.decrease_factor);
  last_decrease_ = now;
  decreased_ = true;
  ++decreases_;
}

}  // namespace bulkhead
