// BridgeSnapshot: the Sidekiq bridge's figures (sidekiq_bridge.h), as plain data for INFO,
// `bulkhead stats`, /metrics and the dashboard (view/bridge_view.h renders them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bulkhead/util/clock.h"

namespace bulkhead {

// A Sidekiq queue the bridge takes from, as last read from the application's Redis.
struct SidekiqQueueFigures {
  std::string name;
  int64_t size = 0;  // LLEN queue:NAME
  // Sidekiq's latency (api.rb Queue#latency): now minus the enqueued_at of the oldest job
  // (LINDEX queue:NAME -1), 0 when the queue is empty; at `polled_at`.
  double latency_seconds = 0;
};

// The counters the bridge's parts add to (loop thread), copied into each BridgeSnapshot.
struct BridgeCounters {
  int64_t taken = 0;
  int64_t repeats = 0;
  int64_t dead = 0;
  int64_t reaped = 0;
  int64_t outcomes_written = 0;
};

struct BridgeSnapshot {
  TimePoint now{};
  // The application's Redis answers and this node holds its name there; otherwise why not.
  bool up = false;
  std::string reason;
  std::string node;            // this node's name in the application's Redis
  std::string redis;           // the URL without its password
  std::string outcomes_queue;  // the Sidekiq queue outcome jobs go to
  // The queues, read at `polled_at` (empty before the first read).
  std::vector<SidekiqQueueFigures> queues;
  TimePoint polled_at{};
  int64_t in_progress = 0;       // jobs this node took and has not settled yet
  int64_t taken = 0;             // jobs taken into bulkhead's store since start
  int64_t repeats = 0;           // jobs taken again and recognised (already in the store)
  int64_t dead = 0;              // jobs refused and written to Sidekiq's dead set
  int64_t reaped = 0;            // jobs taken back from dead nodes' in-progress lists
  int64_t outcomes_written = 0;  // outcome jobs written to the Sidekiq queue
  int64_t outcomes_waiting = 0;  // outcome jobs waiting in bulkhead's store to be written
};

}  // namespace bulkhead
