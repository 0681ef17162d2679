// RedisBatches: BatchStore of the Redis store. Each operation is one script
// (redis_scripts/batch_*.lua and push_member.lua, with batch_lib.lua); a batch is the hash
// {NS}:batch:BID (layout in redis_scripts/README.md).
#pragma once

#include "bulkhead/store/batch_store.h"
#include "bulkhead/store/redis_calls.h"

namespace bulkhead {

class RedisBatches final : public BatchStore {
 public:
  explicit RedisBatches(RedisCalls& calls) : calls_(calls) {}
  void New(BatchRecord batch, TimePoint now, Done durable) override;
  void Get(const std::string& bid, TimePoint now, BatchCallback cb) override;
  void Commit(const std::string& bid, TimePoint now, Done durable) override;
  void PushMember(JobRecord job, const std::string& bid, TimePoint now, Done durable) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;
  void Counts(std::function<void(Result<BatchCounts>)> cb) override;

 private:
  RedisCalls& calls_;
};

}  // namespace bulkhead
