// RedisThrottles: ThrottleStore of the Redis store: fetch_throttled.lua and throttle_uses.lua, one
// script call each; the slots are sorted sets in Redis, shared by every node and kept across
// restarts (the keys in redis_scripts/README.md).
#pragma once

#include "bulkhead/store/redis_calls.h"
#include "bulkhead/store/throttle_store.h"

namespace bulkhead {

class RedisThrottles final : public ThrottleStore {
 public:
  explicit RedisThrottles(RedisCalls& calls) : calls_(calls) {}
  void Fetch(const std::vector<std::string>& queues, const ThrottledFetch& throttled, TimePoint now,
             JobCallback cb) override;
  void Uses(const std::vector<QueueThrottle>& throttles, TimePoint now,
            ThrottleUsesCallback cb) override;

 private:
  RedisCalls& calls_;
};

}  // namespace bulkhead
