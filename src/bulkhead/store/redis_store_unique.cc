// RedisStore's unique-job locks and cron firing claims. Layout: redis_scripts/README.md.
#include <algorithm>
#include <cstdlib>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {

void RedisStore::PushUnique(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) {
  // The lock expires at lock.until on the pushing node's clock (checked by the script); the keys
  // are also given a Redis TTL of that length (plus a second), so that they go by themselves.
  int64_t ttl_ms =
      std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(lock.until - now).count()) +
      1000;
  std::string jid = job.jid;
  EvalReplicated(
      Script::kPushUnique, "push_unique",
      {jid, EncodeRedisJob(job), std::to_string(job.score), options_.node_id, lock.key,
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

void RedisStore::ReleaseUniqueLock(const std::string& jid, Done durable) {
  Eval(Script::kReleaseUnique, "release_unique", {jid},
       [durable = std::move(durable)](Result<RedisReply> r) {
         if (durable) durable(r.ok() ? Status::Ok() : r.status());
       });
}

void RedisStore::ClaimCronFiring(const std::string& entry, TimePoint due, ClaimCallback durable) {
  EvalReplicated(Script::kClaimCron, "claim_cron", {entry, std::to_string(ToUnixMicros(due))},
                 [durable = std::move(durable)](Result<RedisReply> r) {
                   if (!r.ok()) return durable(r.status());
                   durable(r->integer() == 1);
                 });
}

void RedisStore::ListCronFirings(CronFiringsCallback cb) {
  Command("list_cron_firings", {"HGETALL", prefix_ + "cron"},
          [cb = std::move(cb)](Result<RedisReply> r) {
            if (!r.ok()) return cb(r.status());
            std::map<std::string, TimePoint> out;
            const auto& e = r->elements();
            for (size_t i = 0; i + 1 < e.size(); i += 2) {
              out[e[i].str()] = FromUnixMicros(std::strtoll(e[i + 1].str().c_str(), nullptr, 10));
            }
            cb(std::move(out));
          });
}

}  // namespace bulkhead
