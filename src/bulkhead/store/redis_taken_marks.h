// RedisTakenMarks: TakenMarks (taken_marks.h) of the Redis store. The marks are the sorted set
// {NS}:taken (mark -> until, µs); a job and its mark are added by one script call
// (redis_scripts/push_marked.lua), for every node sharing the namespace. Forget is a ZREM, Expire
// expire_marks.lua, Count a ZCARD; flush.lua deletes the set.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_reply.h"
#include "bulkhead/store/redis_script_id.h"
#include "bulkhead/store/taken_marks.h"

namespace bulkhead {

class RedisTakenMarks final : public TakenMarks {
 public:
  using ReplyCallback = std::function<void(Result<RedisReply>)>;
  // What it needs of its RedisStore: a script call (ARGV[1] = the prefix is added), the same
  // answered once a replica has it (durability = "replicated"), a plain command; each answers as
  // the store's own calls do (redis_store.h: errors, order).
  struct Calls {
    std::function<void(Script, const char*, std::vector<std::string>, ReplyCallback)> eval;
    std::function<void(Script, const char*, std::vector<std::string>, ReplyCallback)>
        eval_replicated;
    std::function<void(const char*, std::vector<std::string>, ReplyCallback)> command;
  };
  RedisTakenMarks(Calls calls, std::string prefix, std::string node_id)
      : calls_(std::move(calls)), key_(prefix + "taken"), node_id_(std::move(node_id)) {}

  // In script calls of at most kPerCall jobs (each bounds the time it holds Redis), in order.
  void PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                  PushedCallback durable) override;
  void Forget(std::vector<std::string> marks, Done durable) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;
  void Count(CountCallback cb) override;

  static constexpr size_t kPerCall = 256;

 private:
  Calls calls_;
  const std::string key_;
  const std::string node_id_;
};

}  // namespace bulkhead
