// DeliverySnapshot: a plain copy of the delivery engine's state at one instant (per host and in
// total), for views. Dispatch only produces it (Dispatcher::Snapshot, PublishSnapshot); view/
// renders it, never the live dispatcher: view/host_view.h turns its hosts into HostViews, which
// view/api_json.h renders for /api/hosts and INFO "hosts", view/stats_text.h for `bulkhead stats`
// and view/delivery_gauges.h for bulkhead_host_* and bulkhead_parked_jobs on /metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bulkhead/compartment/compartment.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

// Counters since start, for tests, logs and views.
struct DispatcherStats {
  int64_t taken = 0;     // jobs taken from kDeliveryQueue (adopted ones included)
  int64_t adopted = 0;   // reservations adopted at Start
  int64_t attempts = 0;  // requests sent
  int64_t acked = 0;
  int64_t retried = 0;
  int64_t dead = 0;
  int64_t gone = 0;
  int64_t expired = 0;  // dead because their deadline passed
  int64_t renewed = 0;  // reservations renewed while held
  int64_t outcome_jobs = 0;
};

struct DeliverySnapshot {
  TimePoint at{};  // the dispatcher clock's time of the snapshot
  // One entry per host compartment, ordered by host: state, breaker state and openings, time to
  // the next probe, in-flight cap (limit) and use, parked jobs, successes/failures/overloaded,
  // latency, whether announced unavailable, failing-since and Retry-After.
  std::vector<CompartmentSnapshot> hosts;
  // Totals.
  size_t held = 0;        // jobs held in memory (fresh + parked + in flight)
  size_t parked = 0;      // sum of hosts[].parked
  int in_flight = 0;      // attempts in flight, all hosts
  int max_in_flight = 0;  // this node's global cap: its share of the cluster's
  // Cluster share: the live nodes sharing the store (1 on an embedded store), and this
  // node's bounds of every host's adaptive cap (max_limit / cluster_nodes, min_limit likewise).
  int cluster_nodes = 1;
  int host_cap_max = 0;
  int host_cap_min = 0;
  DispatcherStats stats;
};

}  // namespace bulkhead
