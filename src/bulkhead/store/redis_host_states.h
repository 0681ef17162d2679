// RedisHostStates: HostStateStore of the Redis store: the hash {NS}:hosts (host -> one JSON
// object), one plain command per call. Put and Remove publish "NODE HOST" on {NS}:hosts right after
// the write, on the same connection, so a node that hears of one reads the new state
// (RedisClusterLink runs the host-state handler for the other nodes' messages).
#pragma once

#include "bulkhead/store/host_state_store.h"
#include "bulkhead/store/redis_calls.h"

namespace bulkhead {

class RedisHostStates final : public HostStateStore {
 public:
  explicit RedisHostStates(RedisCalls& calls) : calls_(calls) {}
  void Put(const HostStateRecord& record, Done durable) override;
  void Remove(const std::string& host, Done durable) override;
  void List(HostStatesCallback cb) override;

 private:
  // Announces a change of `host` to the other nodes.
  void Publish(const std::string& host);

  RedisCalls& calls_;
};

}  // namespace bulkhead
