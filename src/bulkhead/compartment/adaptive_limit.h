// AdaptiveLimit: the per-destination-host cap on attempts in flight, adapted by AIMD.
//
// Why AIMD and not a gradient (Vegas/Gradient2-style) limit: the signals bulkhead gets per host are
// few and coarse (a busy inbox sees a request every few seconds, a timeout costs up to 30 s), and
// many destinations sit behind CDNs whose latency varies for reasons unrelated to load. A gradient
// needs a stable no-load RTT and many samples per adjustment; AIMD needs neither, is simple to
// reason about, and converges to a fair share between senders (the TCP argument). Latency still
// counts: a success slower than the threshold is treated as a congestion signal, exactly like the
// Netflix concurrency-limits AIMD ("rtt > timeout ⇒ decrease").
//
// Rules, per finished attempt:
//  * Congestion (timeout or other host failure, 429/503, or a success slower than the latency
//    threshold): limit ← max(min, limit × decrease_factor). At most one decrease per "window":
//    attempts that had already started when the last decrease happened do not decrease again, so a
//    burst of N simultaneous timeouts halves once, not N times (TCP's once-per-RTT rule).
//  * Healthy success: limit ← min(max, limit + additive_increase / limit), i.e. about +1 per
//    limit's worth of successes; only while the host is actually using the cap (in flight ≥
//    limit / 2), so an idle host does not drift up to the ceiling on trust.
//  * Anything else (permanent errors, local failures): no change.
#pragma once

#include <cstddef>
#include <deque>

#include "bulkhead/util/clock.h"

namespace bulkhead {

struct AdaptiveLimitConfig {
  // Starting cap, clamped to [min_limit, max_limit].
  int initial_limit = 4;
  // Floor: a struggling but alive host always gets at least this many attempts at once.
  int min_limit = 1;
  // Ceiling: no host ever gets more than this many attempts at once.
  int max_limit = 32;
  // Added per limit's worth of healthy successes.
  double additive_increase = 1.0;
  // Multiplier applied on congestion; clamped to [0.1, 0.95].
  double decrease_factor = 0.5;
  // A success slower than this is congestion. Well under the 10 s first-byte deadline, well over a
  // healthy push service or inbox (typically < 1 s).
  Duration latency_threshold = std::chrono::seconds(3);
  // If > 0, a success is also congestion when slower than baseline × baseline_tolerance, where the
  // baseline is the minimum latency over the last baseline_window successes. 0 disables the
  // baseline rule (only latency_threshold applies). Successes faster than
  // baseline_min_significant never count as slow under this rule (sub-ms jitter is not a signal).
  double baseline_tolerance = 0.0;
  size_t baseline_window = 64;
  Duration baseline_min_significant = std::chrono::milliseconds(50);
};

// What a finished attempt says about congestion at the host.
enum class LimitSignal {
  kSuccess,     // the host answered (healthy); latency decides between growth and congestion
  kCongestion,  // timeout, connect failure, 5xx, 429: always congestion
  kIgnore,      // no information about the host's load
};

// Not thread-safe: owned by one Compartment on the event loop.
class AdaptiveLimit {
 public:
  explicit AdaptiveLimit(const AdaptiveLimitConfig& config);

  // The current cap (≥ min_limit, ≤ max_limit).
  int limit() const;
  // The unrounded AIMD state, for tests and diagnostics.
  double raw_limit() const { return limit_; }

  // Feeds one finished attempt: it started at now - latency; `in_flight` is the number of attempts
  // still in flight at the host after this one finished.
  void OnResult(LimitSignal signal, Duration latency, TimePoint now, int in_flight);

  // Cluster share: `nodes` nodes (≥ 1; values < 1 act as 1) send to the host, each under its
  // own AdaptiveLimit, so each one's bounds are the configured ones divided by `nodes` (floor,
  // never below 1): the sum over the nodes stays within max_limit while max_limit ≥ nodes. The
  // current (unrounded) cap scales by old/new nodes into the new bounds, so a node that joins
  // shrinks the others' caps at once and one that dies grows them. Attempts already in flight are
  // untouched (in flight may exceed the cap until they finish).
  void SetNodes(int nodes);
  int nodes() const { return nodes_; }
  // The bounds in force (the configured ones, divided as above).
  int min_limit() const { return min_; }
  int max_limit() const { return max_; }

  // The current baseline (minimum recent success latency); zero before any success.
  Duration baseline() const;
  int64_t decreases() const { return decreases_; }

 private:
  void Decrease(TimePoint started, TimePoint now);
  bool IsSlow(Duration latency) const;

  const AdaptiveLimitConfig config_;
  int nodes_ = 1;
  int min_, max_;  // config_'s bounds divided by nodes_
  double limit_;
  TimePoint last_decrease_{};
  bool decreased_ = false;
  int64_t decreases_ = 0;
  std::deque<Duration> recent_success_latency_;  // for the baseline; at most baseline_window
};

}  // namespace bulkhead
