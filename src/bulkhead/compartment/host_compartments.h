// HostCompartments: the compartments of all destination hosts, plus the global in-flight cap
// they share. Decides which hosts may start a request now, so that one host can never take the
// slots every other host needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/compartment/compartment.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {

// The in-flight cap of the compartments whose key starts with `prefix`, instead of the common one
// (the push relay's apps, "apns:NAME": APNs takes up to 1000 streams per connection).
struct CapOverride {
  std::string prefix;
  AdaptiveLimitConfig limit;
};

struct HostCompartmentsConfig {
  // Settings of every compartment.
  CompartmentConfig compartment;
  // Caps by key prefix; the first that matches wins.
  std::vector<CapOverride> cap_overrides;
  // Attempts in flight across all hosts (the worker pool of the incident was 15; bulkhead's
  // attempts cost a socket and a timer, not a thread, so it can afford more). Values < 1 act as 1.
  int global_max_in_flight = 1024;
  // A healthy compartment with nothing in flight or parked is forgotten after this long.
  Duration idle_eviction = std::chrono::minutes(15);
  // A compartment with failing state (failing_since set, failures counted toward the breaker, or
  // breaker not closed) is kept this long after its last activity, longer than the unavailable
  // period, so that a dead host keeps its verdict (and its backoff) while jobs for it keep
  // arriving.
  Duration failing_retention = std::chrono::hours(24 * 8);
};

// Work that could start now for one host, besides the jobs parked in its compartment.
struct HostDemand {
  std::string host;
  int fresh = 0;  // ready jobs held by the caller (not parked)
};

// One admitted attempt.
struct Grant {
  std::string host;
  CompartmentPermit permit;
  // Set when the grant was used for the oldest parked job of the host: run that job. Otherwise
  // run one of the caller's fresh jobs for the host.
  std::optional<std::string> parked_job_id;
};

// Not thread-safe: owned by the event loop. The Rng must outlive it.
//
// Fair share: when the global cap is contended (hosts want more slots than are free), a host may
// only receive a slot while it holds fewer than global_max_in_flight / active_hosts (at least 1),
// where active hosts are those holding slots or able to start one now. Slots nobody else can use
// go to whoever can (max-min fairness: the share is a floor for others, not a ceiling when alone).
// Attempts already running are never preempted: a host above its share gives slots back as its
// attempts finish (within the transport deadline).
//
// Start attempts only through Schedule: grants taken directly with Compartment::TryAcquire or
// NextReady are not counted against the global cap. Get/Find are for everything else (Park,
// Unpark, RestoreFailingSince, inspection).
class HostCompartments {
 public:
  HostCompartments(const HostCompartmentsConfig& config, Rng& rng);
  HostCompartments(const HostCompartments&) = delete;
  HostCompartments& operator=(const HostCompartments&) = delete;

  // The compartment for `host` (exact string; normalise hosts before calling), created on first
  // use. The reference stays valid until the compartment is evicted (EvictIdle).
  Compartment& Get(std::string_view host, TimePoint now);
  Compartment* Find(std::string_view host);
  const Compartment* Find(std::string_view host) const;

  // Whether `host` is known and unavailable (Compartment::unavailable). False for unknown hosts.
  bool IsUnavailable(std::string_view host, TimePoint now) const;

  // Restores the persisted state of `host`'s compartment (creating it), after a restart and before
  // any attempt for the host. See Compartment::Restore.
  void Restore(std::string_view host, const CompartmentState& state, TimePoint now);

  // Parks a job in its host's compartment (creating it). See Compartment::Park.
  Status Park(std::string_view host, std::string job_id, TimePoint now);

  // Decides which attempts may start now. `fresh` lists hosts with ready jobs not parked here;
  // every host with parked jobs takes part as well, parked jobs first. Hosts are served round
  // robin, one slot per turn, starting after the host served first last time, until no host can
  // take a slot: global cap, fair share (while contended), or the host's own compartment (Retry-
  // After, breaker, adaptive cap). Every returned grant is admitted and counted in flight: the
  // caller must start it and report it with OnResult.
  //
  // Cost: O(k log k) for the k hosts with fresh or parked work, plus the grants; independent of
  // how many idle compartments exist.
  std::vector<Grant> Schedule(std::span<const HostDemand> fresh, TimePoint now);

  // Reports the end of an attempt granted by Schedule. See Compartment::OnResult. A host that was
  // evicted meanwhile is impossible (compartments with attempts in flight are never evicted).
  void OnResult(const Grant& grant, const Outcome& outcome, Duration latency, TimePoint now,
                std::optional<TimePoint> retry_after = std::nullopt);

  // Forgets compartments for which Compartment::Evictable holds; returns how many.
  size_t EvictIdle(TimePoint now);

  // Earliest NextWakeup over all compartments: when Schedule may have something new to say
  // without any attempt finishing. nullopt when only results can unblock parked work.
  std::optional<TimePoint> NextWakeup(TimePoint now) const;

  // Cluster share: `nodes` nodes (values < 1 act as 1) share the destination hosts, each
  // with its own HostCompartments, so this node's global cap becomes global_max_in_flight / nodes
  // and every compartment's adaptive cap bounds divide the same way (AdaptiveLimit::SetNodes),
  // floor, never below 1: the caps hold for the cluster as long as each is ≥ nodes. Compartments
  // created later get the same share. Attempts in flight are never cancelled: a node whose share
  // shrank starts nothing new until it is under its new caps.
  void SetNodes(int nodes);
  int nodes() const { return nodes_; }

  int global_in_flight() const { return global_in_flight_; }
  // This node's global cap: global_max_in_flight divided by nodes().
  int global_max_in_flight() const { return global_max_; }
  // This node's bounds of every host's adaptive cap (max_limit and min_limit divided by nodes()).
  int host_cap_max() const;
  int host_cap_min() const;
  size_t size() const { return compartments_.size(); }

  // One entry per compartment, ordered by host.
  std::vector<CompartmentSnapshot> Snapshot(TimePoint now) const;

 private:
  struct Candidate;  // a host that may get grants in one Schedule call
  // Schedule's candidates in host order: hosts with fresh demand merged with hosts that have
  // parked jobs, less those their own compartment blocks now.
  std::vector<Candidate> Candidates(std::span<const HostDemand> fresh, TimePoint now);
  // One round-robin pass over `cands`, one grant per host per round, until the global cap or no
  // host can take more; with `fair_share` > 0 a host stops at that many in flight. Appends to
  // `grants` and drops the candidates that want no more.
  void GrantPass(std::vector<Candidate>& cands, int fair_share, TimePoint now,
                 std::vector<Grant>& grants);

  const HostCompartmentsConfig config_;
  int nodes_ = 1;
  int global_max_;  // config_.global_max_in_flight / nodes_, at least 1
  Rng& rng_;
  CompartmentIndex index_;  // declared before compartments_: they detach from it when destroyed
  std::map<std::string, std::unique_ptr<Compartment>, std::less<>> compartments_;
  int global_in_flight_ = 0;
  std::string last_first_served_;  // round-robin cursor
};

}  // namespace bulkhead
