// RedisUniqueLocks: UniqueLocks of the Redis store: push_unique.lua and release_unique.lua (the
// keys in redis_scripts/README.md).
#pragma once

#include "bulkhead/store/redis_calls.h"
#include "bulkhead/store/unique_locks.h"

namespace bulkhead {

class RedisUniqueLocks final : public UniqueLocks {
 public:
  explicit RedisUniqueLocks(RedisCalls& calls) : calls_(calls) {}
  void Push(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) override;
  void Release(const std::string& jid, Done durable) override;

 private:
  RedisCalls& calls_;
};

}  // namespace bulkhead
