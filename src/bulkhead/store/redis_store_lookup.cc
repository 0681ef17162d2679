// RedisStore's jid lookup and reservation holders: find_job.lua reads {NS}:jobs (one HGET
// and the score); the holders are the hash {NS}:wid (jid -> wid), written by fetch.lua,
// fetch_throttled.lua and set_holder.lua and dropped by the scripts that take a job out of the
// working set
// (redis_scripts/README.md, "Reservation holders").
#include <cmath>
#include <cstdlib>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {
namespace {

// A sorted-set score as µs; 0 for '' (a queued job).
int64_t ScoreUs(const RedisReply& r) {
  if (r.is_integer()) return r.integer();
  if (r.str().empty()) return 0;
  return static_cast<int64_t>(std::llround(std::strtod(r.str().c_str(), nullptr)));
}

}  // namespace

void RedisStore::FindJob(const std::string& jid, JobCallback cb) {
  Eval(Script::kFindJob, "find_job", {jid}, [jid, cb = std::move(cb)](Result<RedisReply> r) {
    if (!r.ok()) return cb(r.status());
    if (!r->is_array() || r->elements().size() != 2) return cb(std::optional<JobRecord>());
    const auto& e = r->elements();
    auto job = DecodeRedisJob(jid, e[0].str(), ScoreUs(e[1]));
    if (!job.ok()) return cb(job.status());
    cb(std::optional<JobRecord>(std::move(*job)));
  });
}

void RedisStore::SetHolder(const std::string& jid, const std::string& wid, Done durable) {
  Eval(Script::kSetHolder, "set_holder", {jid, wid},
       [durable = std::move(durable)](Result<RedisReply> r) {
         if (durable) durable(r.ok() ? Status::Ok() : r.status());
       });
}

void RedisStore::ListHeld(size_t limit, HeldJobsCallback cb) {
  Eval(Script::kListHeld, "list_held", {std::to_string(limit)},
       [cb = std::move(cb)](Result<RedisReply> r) {
         if (!r.ok()) return cb(r.status());
         std::vector<HeldJob> held;
         if (!r->is_array()) return cb(std::move(held));
         const auto& e = r->elements();
         for (size_t i = 0; i + 3 < e.size(); i += 4) {
           auto job = DecodeRedisJob(e[i].str(), e[i + 2].str(), ScoreUs(e[i + 3]));
           if (!job.ok()) return cb(job.status());
           held.push_back(HeldJob{std::move(*job), e[i + 1].str()});
         }
         cb(std::move(held));
       });
}

}  // namespace bulkhead
