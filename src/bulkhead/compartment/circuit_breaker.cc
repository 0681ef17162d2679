#include "bulkhead/compartment/circuit_breaker.h"

#include <algorithm>
#include <cmath>

namespace bulkhead {

const char* BreakerStateName(BreakerState s) {
  switch (s) {
    case BreakerState::kClosed:
      return "closed";
    case BreakerState::kOpen:
      return "open";
    case BreakerState::kHalfOpen:
      return "half_open";
  }
  return "unknown";
}

CircuitBreaker::CircuitBreaker(const CircuitBreakerConfig& config, Rng& rng)
    : config_(config), rng_(rng) {}

BreakerState CircuitBreaker::state(TimePoint now) const {
  if (state_ == BreakerState::kOpen && now >= open_until_) return BreakerState::kHalfOpen;
  return state_;
}

Duration CircuitBreaker::TimeUntilProbe(TimePoint now) const {
  if (state(now) != BreakerState::kOpen) return Duration::zero();
  return open_until_ - now;
}

void CircuitBreaker::Advance(TimePoint now) {
  if (state_ == BreakerState::kOpen && now >= open_until_) {
    state_ = BreakerState::kHalfOpen;
    ++generation_;
    probes_in_flight_ = 0;
    probe_successes_ = 0;
  }
}

bool CircuitBreaker::CanAcquire(TimePoint now) const {
  switch (state(now)) {
    case BreakerState::kClosed:
      return true;
    case BreakerState::kOpen:
      return false;
    case BreakerState::kHalfOpen:
      // After Advance a fresh half-open state has no probes in flight.
      if (state_ == BreakerState::kOpen) return true;
      return probes_in_flight_ < std::max(1, config_.half_open_max_probes);
  }
  return false;
}

bool CircuitBreaker::TryAcquire(TimePoint now, BreakerPermit* permit) {
  Advance(now);
  if (!CanAcquire(now)) return false;
  permit->generation = generation_;
  permit->probe = state_ == BreakerState::kHalfOpen;
  if (permit->probe) ++probes_in_flight_;
  return true;
}

void CircuitBreaker::OnSuccess(const BreakerPermit& permit, TimePoint now) {
  Advance(now);
  if (permit.generation != generation_) return;  // stale
  if (state_ == BreakerState::kClosed) {
    consecutive_failures_ = 0;
    return;
  }
  if (state_ == BreakerState::kHalfOpen && permit.probe) {
    --probes_in_flight_;
    if (++probe_successes_ >= std::max(1, config_.half_open_successes_to_close)) Close(now);
  }
}

void CircuitBreaker::OnFailure(const BreakerPermit& permit, TimePoint now) {
  Advance(now);
  if (permit.generation != generation_) return;  // stale
  if (state_ == BreakerState::kClosed) {
    if (++consecutive_failures_ >= std::max(1, config_.failure_threshold)) Open(now);
    return;
  }
  if (state_ == BreakerState::kHalfOpen && permit.probe) Open(now);
}

void CircuitBreaker::OnIgnored(const BreakerPermit& permit, TimePoint now) {
  Advance(now);
  if (permit.generation != generation_) return;
  if (state_ == BreakerState::kHalfOpen && permit.probe) --probes_in_flight_;
}

void CircuitBreaker::Open(TimePoint now) {
  if (state_ == BreakerState::kClosed && now - closed_since_ >= config_.series_reset_after) {
    series_openings_ = 0;
  }
  ++series_openings_;
  ++openings_;
  ++generation_;
  state_ = BreakerState::kOpen;
  probes_in_flight_ = 0;
  probe_successes_ = 0;
  open_until_ = now + NextInterval();
}

void CircuitBreaker::Close(TimePoint now) {
  state_ = BreakerState::kClosed;
  ++generation_;
  consecutive_failures_ = 0;
  probes_in_flight_ = 0;
  probe_successes_ = 0;
  closed_since_ = now;
}

void CircuitBreaker::Restore(std::optional<TimePoint> open_until, int series_openings,
                             int64_t openings, TimePoint now) {
  ++generation_;
  consecutive_failures_ = 0;
  probes_in_flight_ = 0;
  probe_successes_ = 0;
  series_openings_ = std::max(0, series_openings);
  openings_ = std::max<int64_t>(0, openings);
  if (open_until) {
    state_ = BreakerState::kOpen;
    open_until_ = *open_until;
  } else {
    state_ = BreakerState::kClosed;
    closed_since_ = now;
  }
}

Duration CircuitBreaker::NextInterval() {
  using std::chrono::microseconds;
  const double base = static_cast<double>(
      std::chrono::duration_cast<microseconds>(config_.base_open_interval).count());
  const double cap = static_cast<double>(
      std::chrono::duration_cast<microseconds>(config_.max_open_interval).count());
  const double mult = std::max(1.0, config_.backoff_multiplier);
  // series_openings_ >= 1 here; stop growing once past the cap so the power cannot overflow.
  double interval = base;
  for (int i = 1; i < series_openings_ && interval < cap; ++i) interval *= mult;
  interval = std::min(interval, cap);
  if (config_.jitter_fraction > 0 && interval > 0) {
    const auto spread = static_cast<uint64_t>(interval * config_.jitter_fraction);
    if (spread > 0) interval += static_cast<double>(rng_.Uniform(spread + 1));
  }
  interval = std::min(interval, cap);
  return std::chrono::duration_cast<Duration>(microseconds(static_cast<int64_t>(interval)));
}

}  // namespace bulkhead
