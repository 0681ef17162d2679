// BridgeLiveness: this node's life in the application's Redis, as the Redis store keeps it in its
// namespace (store/redis_store_liveness.cc, redis_scripts/reap.lua): an alive key with a TTL,
// refreshed by a heartbeat, and a registry of nodes; and the reaper that takes the in-progress
// list of a node whose alive key is gone back into this node's (reap.lua), when the nodes share
// bulkhead's store (then its marks recognise every job the dead node had already stored).
//
// The alive key holds this process's token, so a name is held by one process at a time: a second
// process given the same name (sidekiq.node, or the host name with an embedded store) is told it
// is in use and waits until the first one's key is gone (a graceful stop deletes it; after a kill
// -9 it expires). Keys: sidekiq_scripts.h.
//
// Loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_client.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

struct LivenessOptions {
  std::string node;
  std::string token;  // this process's
  std::chrono::milliseconds heartbeat_every{5000};
  std::chrono::milliseconds heartbeat_ttl{15000};
  std::chrono::milliseconds reap_every{5000};
  bool reap_others = false;  // the nodes share bulkhead's store
};

class BridgeLiveness {
 public:
  struct Handlers {
    // The name is held by this process (true), or by another one (false); at each change.
    std::function<void(bool held)> on_name;
    // A heartbeat found the alive key gone (it lapsed): another node may have taken the list.
    std::function<void()> on_lapsed;
    // A reap moved these jobs into this node's list; `reaped` names the dead nodes.
    std::function<void(std::vector<std::string> jobs, std::vector<std::string> reaped)> on_reaped;
    // A reap's reply was lost: it may have moved jobs into the list.
    std::function<void()> on_reap_lost;
  };

  BridgeLiveness(boost::asio::io_context& io, const Clock& clock, RedisClient& commands,
                 LivenessOptions options, Handlers handlers);
  ~BridgeLiveness();
  BridgeLiveness(const BridgeLiveness&) = delete;
  BridgeLiveness& operator=(const BridgeLiveness&) = delete;

  // Starts the timers; a heartbeat goes at once (and at each Beat).
  void Start();
  void Beat();
  // A graceful stop: the timers stop; stop.lua deletes the alive key (and the registry entry
  // when the list is empty). `done` runs once it is answered (or failed).
  void Stop(std::function<void()> done);
  bool name_held() const { return held_; }

 private:
  void ScheduleHeartbeat();
  void ScheduleReap();
  void Reap();

  RedisClient& commands_;
  const LivenessOptions options_;
  Handlers handlers_;
  Timer heartbeat_timer_, reap_timer_;
  bool held_ = false;
  bool beating_ = false;
  bool reaping_ = false;
  bool stopped_ = false;
  bool ever_beat_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
