// RedisHolders: HolderStore of the Redis store: the hash {NS}:wid (jid -> wid), written by
// fetch.lua, fetch_throttled.lua and set_holder.lua and dropped by the scripts that take a job out
// of the working set; list_held.lua reads it with the jobs (redis_scripts/README.md, "Reservation
// holders").
#pragma once

#include "bulkhead/store/holder_store.h"
#include "bulkhead/store/redis_calls.h"

namespace bulkhead {

class RedisHolders final : public HolderStore {
 public:
  explicit RedisHolders(RedisCalls& calls) : calls_(calls) {}
  void Set(const std::string& jid, const std::string& wid, Done durable) override;
  void List(size_t limit, HeldJobsCallback cb) override;

 private:
  RedisCalls& calls_;
};

}  // namespace bulkhead
