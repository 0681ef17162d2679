// CircuitBreaker: per-destination-host fail-fast switch. After enough consecutive failures it
// opens and refuses attempts, so a dead host costs no worker time, no socket and no retry; after an
// open interval it lets a bounded number of probes through and closes again only on their success.
#pragma once

#include <cstdint>
#include <optional>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {

// Defaults sit between Envoy outlier detection (5 consecutive errors, 30 s base ejection growing
// per ejection, 300 s cap, additive jitter; envoyproxy/envoy
// api/envoy/config/cluster/v3/outlier_detection.proto) and Mastodon's stoplight (10 failures, 60 s
// cool-off; mastodon/mastodon config/initializers/stoplight.rb). A failure here is usually a full
// transport timeout (up to 30 s), so 5 in a row already means minutes of a host not answering.
struct CircuitBreakerConfig {
  // Consecutive failures (in the closed state) that open the breaker. Values < 1 act as 1.
  int failure_threshold = 5;
  // Open interval after the first opening of a series.
  Duration base_open_interval = std::chrono::seconds(30);
  // Each further opening in a series multiplies the interval by this (values < 1 act as 1).
  double backoff_multiplier = 2.0;
  // Upper bound of the open interval, jitter included.
  Duration max_open_interval = std::chrono::minutes(10);
  // Up to this fraction of the interval is added at random (uniform, via Rng) so that breakers
  // opened together do not probe together. 0 disables jitter.
  double jitter_fraction = 0.2;
  // Probes allowed in flight at once while half-open (values < 1 act as 1).
  int half_open_max_probes = 1;
  // Successful probes needed to close (values < 1 act as 1). May exceed half_open_max_probes: a
  // probe slot freed by a success admits the next probe.
  int half_open_successes_to_close = 1;
  // A series of openings (which drives the exponential growth) ends once the breaker has stayed
  // closed this long: the next opening starts again from base_open_interval.
  Duration series_reset_after = std::chrono::minutes(10);
};

enum class BreakerState { kClosed, kOpen, kHalfOpen };

const char* BreakerStateName(BreakerState s);

// Issued for every admitted attempt; handed back with its result. An attempt admitted under an
// earlier state (e.g. started while closed, finishing after the breaker opened) is "stale": its
// result no longer changes the state, so a slow batch of doomed requests cannot reopen or close
// the breaker twice.
struct BreakerPermit {
  uint64_t generation = 0;
  bool probe = false;
};

// Not thread-safe: owned by one Compartment on the event loop. The Rng must outlive it.
//
// States and transitions (all lazy: time-driven moves happen in the first call at or after the
// deadline, there are no timers):
//   closed    --failure_threshold consecutive failures-->  open
//   open      --open interval elapsed-->                   half-open
//   half-open --a probe fails-->                           open (next interval of the series)
//   half-open --half_open_successes_to_close successes-->  closed
// A success in the closed state resets the consecutive-failure count.
//
// Contract: every permit from TryAcquire gets exactly one OnSuccess/OnFailure/OnIgnored call.
class CircuitBreaker {
 public:
  CircuitBreaker(const CircuitBreakerConfig& config, Rng& rng);
  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // True and a permit in *permit when an attempt may start now. Closed: always. Half-open: while
  // fewer than half_open_max_probes probes are in flight (the permit is then a probe). Open: never.
  bool TryAcquire(TimePoint now, BreakerPermit* permit);
  // Whether TryAcquire would grant now, without taking a probe slot.
  bool CanAcquire(TimePoint now) const;

  void OnSuccess(const BreakerPermit& permit, TimePoint now);
  void OnFailure(const BreakerPermit& permit, TimePoint now);
  // The attempt ended without saying anything about the host (cancelled, blocked locally):
  // releases a probe slot, changes nothing else.
  void OnIgnored(const BreakerPermit& permit, TimePoint now);

  BreakerState state(TimePoint now) const;
  // Zero unless open; else the time left until half-open.
  Duration TimeUntilProbe(TimePoint now) const;
  // When the current open interval ends (meaningful only while open).
  TimePoint open_until() const { return open_until_; }

  int consecutive_failures() const { return consecutive_failures_; }
  // Total openings since construction (including reopenings from half-open).
  int64_t openings() const { return openings_; }
  // Openings in the current series (drives the interval growth).
  int series_openings() const { return series_openings_; }

  // Restores a persisted state (after a restart), replacing the current one. With `open_until`
  // the breaker is open until then (half-open once it has passed: the next attempt is a probe, as
  // usual); without, it is closed with no failures counted, as if it had closed at `now`. The
  // openings counts continue from the given values, so a reopening keeps growing the interval.
  // Permits issued before become stale.
  void Restore(std::optional<TimePoint> open_until, int series_openings, int64_t openings,
               TimePoint now);

 private:
  void Advance(TimePoint now);  // applies the open -> half-open move if due
  void Open(TimePoint now);
  void Close(TimePoint now);
  Duration NextInterval();

  const CircuitBreakerConfig config_;
  Rng& rng_;

  BreakerState state_ = BreakerState::kClosed;
  uint64_t generation_ = 0;  // bumped on every state change
  int consecutive_failures_ = 0;
  int probes_in_flight_ = 0;
  int probe_successes_ = 0;
  int series_openings_ = 0;
  int64_t openings_ = 0;
  TimePoint open_until_{};
  TimePoint closed_since_{};
};

}  // namespace bulkhead
