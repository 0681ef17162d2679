// PublishedSnapshot: the latest EngineSnapshot the event loop has published, for readers on any
// thread (the /metrics gauges, the StatsD emitter's thread).
//
// The rule for figures that cross threads: the event loop publishes (server/server_metrics.cc
// does so every second and right before it serves a /metrics scrape); a reader takes the latest
// copy and never waits for the loop. A reader off the loop therefore sees figures at most one
// publication old — and still answers when the loop is stuck.
//
// Thread-safe. Publish() and Latest() take a mutex only long enough to swap a pointer.
#pragma once

#include <memory>
#include <mutex>

#include "bulkhead/engine/engine_snapshot.h"

namespace bulkhead {

class PublishedSnapshot {
 public:
  // Replaces the latest snapshot.
  void Publish(EngineSnapshot snapshot);
  // The latest published snapshot (immutable, shared with other readers), or null before the
  // first Publish().
  std::shared_ptr<const EngineSnapshot> Latest() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const EngineSnapshot> latest_;  // guarded by mu_
};

}  // namespace bulkhead
