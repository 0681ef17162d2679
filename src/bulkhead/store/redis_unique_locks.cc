#include "bulkhead/store/redis_unique_locks.h"

#include <algorithm>

#include "bulkhead/store/redis_job_codec.h"

namespace bulkhead {

void RedisUniqueLocks::Push(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) {
  // The lock expires at lock.until on the pushing node's clock (checked by the script); the keys
  // are also given a Redis TTL of that length (plus a second), so that they go by themselves.
  int64_t ttl_ms =
      std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(lock.until - now).count()) +
      1000;
  std::string jid = job.jid;
  calls_.EvalReplicated(
      Script::kPushUnique, "push_unique",
      {jid, EncodeRedisJob(job), std::to_string(job.score), calls_.node(), lock.key,
       std::to_string(ToUnixMicros(lock.until)), std::to_string(ToUnixMicros(now)),
       std::to_string(ttl_ms)},
      [jid, durable = std::move(durable)](Result<RedisReply> r) {
        if (!r.ok()) return durable(r.status());
        if (r->integer() == 0) {
          return durable(Status::AlreadyExists("jid " + jid + " is already known to the server"));
        }
        if (r->integer() < 0) return durable(NotUniqueStatus());
        durable(Status::Ok());
      });
}

void RedisUniqueLocks::Release(const std::string& jid, Done durable) {
  calls_.Eval(Script::kReleaseUnique, "release_unique", {jid},
              [durable = std::move(durable)](Result<RedisReply> r) {
                if (durable) durable(r.ok() ? Status::Ok() : r.status());
              });
}

}  // namespace bulkhead
