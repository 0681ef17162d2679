// The bridge's scripts in the application's Redis (sidekiq_scripts/*.lua, embedded at build time
// by CMakeLists.txt; each file's first lines say its keys and arguments), and the keys the bridge
// keeps there beside Sidekiq's own, all under kBridgeKeyPrefix:
//   bulkhead:bridge:taking:NODE  list    NODE's in-progress jobs: taken from a Sidekiq queue, not
//                                        yet settled (in bulkhead's store, or in the dead set)
//   bulkhead:bridge:alive:NODE   string  NODE's heartbeat: its process's token, expiring after the
//                                        heartbeat TTL
//   bulkhead:bridge:nodes        set     every node that has (or had) an in-progress list
// Sidekiq's keys the bridge touches: queue:NAME (takes from the right end, writes outcome jobs to
// the left), queues (the outcome queue's name), dead (refused jobs).
#pragma once

#include <string>

#include "bulkhead/redis/redis_script.h"

namespace bulkhead {

inline constexpr char kBridgeKeyPrefix[] = "bulkhead:bridge:";

struct SidekiqScripts {
  RedisScript take, settle, heartbeat, reap, stop, push_outcomes;

  // Composed and hashed once per process; immutable, so any thread may use it.
  static const SidekiqScripts& Get();
};

inline std::string TakingKey(const std::string& node) {
  return std::string(kBridgeKeyPrefix) + "taking:" + node;
}
inline std::string AliveKey(const std::string& node) {
  return std::string(kBridgeKeyPrefix) + "alive:" + node;
}
inline std::string NodesKey() { return std::string(kBridgeKeyPrefix) + "nodes"; }

}  // namespace bulkhead
