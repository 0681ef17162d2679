// RedisStore's reads: Stats and List.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {
namespace {

int64_t Number(const RedisReply& r) {
  if (r.is_integer()) return r.integer();
  std::string_view s = r.str();
  if (s.starts_with('+')) s.remove_prefix(1);
  return std::strtoll(std::string(s).c_str(), nullptr, 10);
}

}  // namespace

void RedisStore::Stats(std::function<void(Result<StoreStats>)> cb) {
  Eval(Script::kStats, "stats", {}, [cb = std::move(cb)](Result<RedisReply> r) {
    if (!r.ok()) return cb(r.status());
    const auto& e = r->elements();
    if (e.size() < 6) return cb(Status::Internal("redis store stats: short reply"));
    StoreStats s;
    s.scheduled = static_cast<size_t>(Number(e[0]));
    s.retries = static_cast<size_t>(Number(e[1]));
    s.dead = static_cast<size_t>(Number(e[2]));
    s.working = static_cast<size_t>(Number(e[3]));
    s.processed = Number(e[4]);
    s.failures = Number(e[5]);
    for (size_t i = 6; i + 3 < e.size(); i += 4) {
      QueueStats q;
      q.size = static_cast<size_t>(Number(e[i + 1]));
      q.paused = Number(e[i + 2]) != 0;
      q.oldest_enqueued_us = q.size > 0 ? Number(e[i + 3]) : 0;
      s.enqueued += q.size;
      s.queues.emplace(e[i].str(), q);
    }
    cb(std::move(s));
  });
}

void RedisStore::List(JobState set, size_t offset, size_t limit, JobsCallback cb) {
  if (limit == 0 || set == JobState::kQueued) {
    // Nothing to read, but the answer still comes in order, after the earlier calls' answers.
    Command("list", {"PING"}, [cb = std::move(cb)](Result<RedisReply> r) {
      if (!r.ok()) return cb(r.status());
      cb(std::vector<JobRecord>());
    });
    return;
  }
  const char* name = set == JobState::kScheduled ? "scheduled"
                     : set == JobState::kRetry   ? "retry"
                     : set == JobState::kDead    ? "dead"
                                                 : "working";
  Eval(Script::kRange, "list",
       {name, "index", std::to_string(offset), std::to_string(offset + limit - 1)},
       [cb = std::move(cb)](Result<RedisReply> r) {
         if (!r.ok()) return cb(r.status());
         std::vector<JobRecord> jobs;
         const auto& e = r->elements();
         for (size_t i = 0; i + 2 < e.size(); i += 3) {
           auto job = DecodeRedisJob(
               e[i].str(), e[i + 1].str(),
               static_cast<int64_t>(std::llround(std::strtod(e[i + 2].str().c_str(), nullptr))));
           if (!job.ok()) return cb(job.status());
           jobs.push_back(std::move(*job));
         }
         cb(std::move(jobs));
       });
}

}  // namespace bulkhead
