#include "bulkhead/store/redis_holders.h"

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {

void RedisHolders::Set(const std::string& jid, const std::string& wid, Done durable) {
  calls_.Eval(Script::kSetHolder, "set_holder", {jid, wid},
              [durable = std::move(durable)](Result<RedisReply> r) {
                if (durable) durable(r.ok() ? Status::Ok() : r.status());
              });
}

void RedisHolders::List(size_t limit, HeldJobsCallback cb) {
  calls_.Eval(Script::kListHeld, "list_held", {std::to_string(limit)},
              [cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                std::vector<HeldJob> held;
                if (!r->is_array()) return cb(std::move(held));
                const auto& e = r->elements();
                for (size_t i = 0; i + 3 < e.size(); i += 4) {
                  auto job = DecodeRedisJob(e[i].str(), e[i + 2].str(), ScoreMicros(e[i + 3]));
                  if (!job.ok()) return cb(job.status());
                  held.push_back(HeldJob{std::move(*job), e[i + 1].str()});
                }
                cb(std::move(held));
              });
}

}  // namespace bulkhead
