// Compartment: everything bulkhead knows and decides about one destination host. A host that stops
// answering fills only its own compartment: its attempts are capped (AdaptiveLimit), then refused
// outright (CircuitBreaker), and the jobs that cannot start wait parked here without spending a
// retry or occupying a worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bulkhead/compartment/adaptive_limit.h"
#include "bulkhead/compartment/circuit_breaker.h"
#include "bulkhead/compartment/outcome.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct CompartmentConfig {
  AdaptiveLimitConfig limit;
  CircuitBreakerConfig breaker;
  // A host failing continuously (no healthy answer in between) for this long is "unavailable"
  // (Misskey and Pleroma use 7 days; Mastodon 7 distinct days with failures). Cleared by the next
  // healthy answer from the host itself, never by other traffic (Mastodon issue 31118).
  Duration unavailable_after = std::chrono::hours(24 * 7);
  // A success slower than this still completes its job but counts as a failure for the breaker
  // (resilience4j's slow-call rule): a host that takes longer than the 10 s first-byte budget on
  // every request is the "slow relay" of the incident, and must not hold slots indefinitely.
  // Zero disables the rule.
  Duration slow_call_threshold = std::chrono::seconds(10);
  // Latency statistics: EWMA weight of the newest sample, and how many recent samples the
  // p50/p99 are computed over.
  double latency_ewma_alpha = 0.2;
  size_t latency_window = 128;
  // Upper bound on parked job ids; Park fails with ResourceExhausted beyond it. 0 = unbounded.
  size_t max_parked = 100'000;
};

// Why an attempt may not start now.
enum class ParkReason {
  kNone,           // granted
  kRetryAfter,     // the host sent Retry-After; not before AcquireResult::not_before
  kBreakerOpen,    // breaker open; the next probe is possible at AcquireResult::not_before
  kProbeInFlight,  // breaker half-open and every probe slot is taken; wait for a probe result
  kAtCapacity,     // in flight == adaptive limit; wait for an attempt to finish
  kParkedAhead,    // parked jobs are waiting; they go first (take them with NextReady)
};

const char* ParkReasonName(ParkReason r);

// Proof that an attempt was admitted; hand it back to OnResult exactly once.
struct CompartmentPermit {
  BreakerPermit breaker;
};

struct AcquireResult {
  bool granted = false;
  ParkReason reason = ParkReason::kNone;
  CompartmentPermit permit;  // valid when granted
  // For kRetryAfter and kBreakerOpen: the earliest time the answer can change by itself.
  // Otherwise equal to the `now` passed in.
  TimePoint not_before{};
};

struct ReadyJob {
  std::string job_id;
  CompartmentPermit permit;
};

// Point-in-time view for /api/hosts and metrics.
struct CompartmentSnapshot {
  std::string host;
  int in_flight = 0;
  int limit = 0;
  BreakerState breaker = BreakerState::kClosed;
  int64_t breaker_openings = 0;
  Duration time_until_probe{};
  Duration latency_ewma{};
  Duration latency_p50{};  // over the last latency_window attempts; zero when none yet
  Duration latency_p99{};
  int64_t successes = 0;   // healthy answers (2xx, and 4xx other than 408/429)
  int64_t failures = 0;    // host failures: timeouts, connection errors, 5xx other than 503, 408
  int64_t overloaded = 0;  // 429 and 503
  size_t parked = 0;
  bool unavailable = false;
  std::optional<TimePoint> failing_since;
  std::optional<TimePoint> retry_after_until;
  // While the breaker is open or half-open: the end of its (last) open interval (in the past once
  // half-open). Unset while closed.
  std::optional<TimePoint> breaker_open_until;
  // The reason (the Outcome::reason given to OnResult, e.g. "http 503"; the dispatcher appends the
  // transport's message, e.g. "timeout: timeout_total") and end time of the last attempt that
  // failed or was refused as overloaded (HostSignal kFailure or kOverloaded). Kept after later
  // successes: it says what went wrong last, not that the host is failing now (failing_since and
  // the breaker say that). Empty and unset before the first such attempt.
  std::string last_error;
  std::optional<TimePoint> last_error_at;
};

// The part of a compartment's state that is worth keeping across a restart: what keeps a failing
// host's jobs parked, its breaker backoff growing and its unavailable period counted from its first
// failure. The rest (adaptive cap, latency, counters) starts afresh. Equal to CompartmentState{}
// (healthy()) when there is nothing to keep.
struct CompartmentState {
  // Set while the breaker is open or half-open: the end of its (last) open interval.
  std::optional<TimePoint> breaker_open_until;
  int breaker_series_openings = 0;  // see CircuitBreaker::series_openings
  int64_t breaker_openings = 0;     // see CircuitBreaker::openings
  std::optional<TimePoint> failing_since;
  std::optional<TimePoint> retry_after_until;  // only while still ahead

  bool healthy() const { return !breaker_open_until && !failing_since && !retry_after_until; }
  bool operator==(const CompartmentState&) const = default;
};

class Compartment;

// Orders compartments by host name.
struct CompartmentByHost {
  bool operator()(const Compartment* a, const Compartment* b) const;
};

// What a HostCompartments needs to find without scanning every compartment. An attached
// Compartment keeps it current as its parked queue and in-flight count change.
struct CompartmentIndex {
  std::set<Compartment*, CompartmentByHost> parked;  // compartments with parked jobs
  int holders = 0;                                   // compartments with attempts in flight
};

// Not thread-safe: one event-loop thread owns all compartments (through HostCompartments).
// The Rng must outlive it.
//
// Protocol: every granted attempt (TryAcquire or NextReady) must end with exactly one OnResult
// with the permit it got, even when the attempt is cancelled (pass an Outcome with
// HostSignal::kNone), or the in-flight count leaks.
class Compartment {
 public:
  Compartment(std::string host, const CompartmentConfig& config, Rng& rng, TimePoint now);
  Compartment(const Compartment&) = delete;
  Compartment& operator=(const Compartment&) = delete;

  // Leaves the attached index (if any).
  ~Compartment();

  const std::string& host() const { return host_; }

  // Makes this compartment keep `index` current (HostCompartments does this on creation).
  // `index` must outlive the compartment or be detached with nullptr.
  void AttachIndex(CompartmentIndex* index);

  // Admits one attempt now, or says why not. Checks, in order: Retry-After, breaker open, parked
  // jobs ahead, half-open probe slots, adaptive cap. A grant increments in_flight().
  AcquireResult TryAcquire(TimePoint now);
  // What TryAcquire would answer, without taking anything. Ignores parked jobs when
  // `ignore_parked` (that is the question "could the head of the parked queue start?").
  ParkReason Check(TimePoint now, bool ignore_parked = false) const;

  // Records the end of an attempt admitted under `permit`. `latency` is its duration (for a
  // timeout, the time until the deadline). `retry_after` is the parsed Retry-After of the answer,
  // if any (see ParseRetryAfter); the host gets no attempt before it.
  void OnResult(const CompartmentPermit& permit, const Outcome& outcome, Duration latency,
                TimePoint now, std::optional<TimePoint> retry_after = std::nullopt);

  // Appends a job id to the parked FIFO. ResourceExhausted when max_parked is reached.
  Status Park(std::string job_id);
  // If a parked job exists and an attempt may start now, pops the oldest and admits it (as a
  // grant of TryAcquire would). Otherwise nullopt and nothing changes.
  std::optional<ReadyJob> NextReady(TimePoint now);
  // Removes a parked job (e.g. cancelled or expired meanwhile). False if it was not parked.
  bool Unpark(const std::string& job_id);
  size_t parked_count() const { return parked_.size(); }
  const std::deque<std::string>& parked() const { return parked_; }

  // When parked jobs could become startable by the passage of time alone (end of Retry-After or
  // of the open interval); nullopt when there is nothing parked, when they can start now, or when
  // they wait for an in-flight attempt to finish.
  std::optional<TimePoint> NextWakeup(TimePoint now) const;

  // Host-unavailable rule: failing continuously for at least unavailable_after. Bulkhead keeps
  // probing through the breaker so that a recovered host clears itself; what to do with new jobs
  // for an unavailable host (drop, dead-letter) is the caller's policy.
  bool unavailable(TimePoint now) const;
  std::optional<TimePoint> failing_since() const { return failing_since_; }
  // Restores a persisted failing-since time (after a restart or an eviction).
  void RestoreFailingSince(TimePoint since) { failing_since_ = since; }

  // What to persist of this compartment now (see CompartmentState). Changes only on breaker
  // openings and closings, failing_since set or cleared, and a new Retry-After (and when a
  // Retry-After or the breaker's openings series lapses, but never on an attempt's start or on
  // a failure that changes none of these), so callers can write it whenever it differs from what
  // they wrote last.
  CompartmentState State(TimePoint now) const;
  // Replaces the persisted part of the state with `state` (after a restart): an open breaker stays
  // open until its saved time, then admits a half-open probe as usual; a Retry-After already past
  // is ignored. Attempts in flight and parked jobs are untouched (call it before starting any).
  void Restore(const CompartmentState& state, TimePoint now);

  // Another node holds the one half-open probe of this host (several nodes sharing a store):
  // while the breaker is half-open, no probe starts here before `until` (Check says
  // kProbeInFlight, NextWakeup wakes at `until`); nullopt lifts the hold. Not part of State():
  // each node holds its own.
  void HoldProbes(std::optional<TimePoint> until) { probe_hold_until_ = until; }
  std::optional<TimePoint> probe_hold_until() const { return probe_hold_until_; }
  int in_flight() const { return in_flight_; }
  int limit() const { return limit_.limit(); }
  // Cluster share of the adaptive cap: see AdaptiveLimit::SetNodes.
  void SetNodes(int nodes) { limit_.SetNodes(nodes); }
  const CircuitBreaker& breaker() const { return breaker_; }
  const AdaptiveLimit& adaptive_limit() const { return limit_; }
  TimePoint last_activity() const { return last_activity_; }
  std::optional<TimePoint> retry_after_until() const { return retry_after_until_; }

  // True when little is lost by forgetting this compartment: nothing in flight or parked, no
  // pending Retry-After, and idle (no attempt started or finished) for `idle_after`; a host with
  // failing state (failing_since, failures toward the breaker, breaker not closed) only after
  // `failing_retention`, so that an unavailable verdict or a backoff is not forgotten early.
  bool Evictable(TimePoint now, Duration idle_after, Duration failing_retention) const;

  CompartmentSnapshot Snapshot(TimePoint now) const;

  // See CompartmentSnapshot::last_error. Not part of State(): it is this node's observation and
  // starts empty after a restart. ForgetLastError clears it (the operator's "forget failures").
  const std::string& last_error() const { return last_error_; }
  std::optional<TimePoint> last_error_at() const { return last_error_at_; }
  void ForgetLastError();

 private:
  AcquireResult Admit(TimePoint now, bool ignore_parked);
  bool ProbesHeld(TimePoint now) const { return probe_hold_until_ && now < *probe_hold_until_; }
  void RecordLatency(Duration latency);
  void RecordError(const std::string& reason, TimePoint now);
  void OnParkedChanged();  // after parked_ changed size

  const std::string host_;
  const CompartmentConfig config_;
  AdaptiveLimit limit_;
  CircuitBreaker breaker_;

  CompartmentIndex* index_ = nullptr;
  int in_flight_ = 0;
  std::deque<std::string> parked_;
  std::optional<TimePoint> retry_after_until_;
  std::optional<TimePoint> probe_hold_until_;
  std::optional<TimePoint> failing_since_;
  TimePoint last_activity_;

  int64_t successes_ = 0;
  int64_t failures_ = 0;
  int64_t overloaded_ = 0;
  std::string last_error_;
  std::optional<TimePoint> last_error_at_;

  double latency_ewma_us_ = 0;
  bool have_latency_ = false;
  std::vector<Duration> latency_ring_;  // capacity latency_window, oldest overwritten
  size_t latency_next_ = 0;
};

}  // namespace bulkhead
