// RedisTakenMarks: TakenMarks (taken_marks.h) of the Redis store. The marks are the sorted set
// {NS}:taken (mark -> until, µs); a job and its mark are added by one script call
// (redis_scripts/push_marked.lua), for every node sharing the namespace. Forget is a ZREM, Expire
// expire_marks.lua, Count a ZCARD; flush.lua deletes the set.
#pragma once

#include <string>
#include <vector>

#include "bulkhead/store/redis_calls.h"
#include "bulkhead/store/taken_marks.h"

namespace bulkhead {

class RedisTakenMarks final : public TakenMarks {
 public:
  explicit RedisTakenMarks(RedisCalls& calls) : calls_(calls) {}

  // In script calls of at most kPerCall jobs (each bounds the time it holds Redis), in order.
  void PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                  PushedCallback durable) override;
  void Forget(std::vector<std::string> marks, Done durable) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;
  void Count(CountCallback cb) override;

  static constexpr size_t kPerCall = 256;

 private:
  // {NS}:taken
  std::string key() const { return calls_.key_prefix() + "taken"; }

  RedisCalls& calls_;
};

}  // namespace bulkhead
