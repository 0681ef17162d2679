// RedisStore's reads and its records beside the jobs: signing keys ({NS}:keys), host states
// ({NS}:hosts, one JSON object per host), Stats, List and FindJob (find_job.lua).
#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {
namespace {

std::string HostStateJson(const HostStateRecord& r) {
  return nlohmann::json{{"breaker_open_until_us", r.breaker_open_until_us},
                        {"breaker_series_openings", r.breaker_series_openings},
                        {"breaker_openings", r.breaker_openings},
                        {"failing_since_us", r.failing_since_us},
                        {"unavailable", r.unavailable},
                        {"retry_after_until_us", r.retry_after_until_us}}
      .dump();
}

Result<HostStateRecord> ParseHostState(const std::string& host, const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return Status::Internal("redis store: the stored state of host " + host + " is not JSON");
  }
  HostStateRecord r;
  r.host = host;
  r.breaker_open_until_us = doc.value("breaker_open_until_us", int64_t{0});
  r.breaker_series_openings = doc.value("breaker_series_openings", int32_t{0});
  r.breaker_openings = doc.value("breaker_openings", int64_t{0});
  r.failing_since_us = doc.value("failing_since_us", int64_t{0});
  r.unavailable = doc.value("unavailable", false);
  r.retry_after_until_us = doc.value("retry_after_until_us", int64_t{0});
  return r;
}

int64_t Number(const RedisReply& r) {
  if (r.is_integer()) return r.integer();
  std::string_view s = r.str();
  if (s.starts_with('+')) s.remove_prefix(1);
  return std::strtoll(std::string(s).c_str(), nullptr, 10);
}

// {field, value, ...} (HGETALL) as pairs ordered by field.
std::vector<std::pair<std::string, std::string>> SortedPairs(const RedisReply& r) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto& e = r.elements();
  for (size_t i = 0; i + 1 < e.size(); i += 2) out.emplace_back(e[i].str(), e[i + 1].str());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void RedisStore::PutSigningKey(const std::string& key_id, const std::string& pem, Done durable) {
  Command("put_signing_key", {"HSET", prefix_ + "keys", key_id, pem},
          [durable = std::move(durable)](Result<RedisReply> r) {
            durable(r.ok() ? Status::Ok() : r.status());
          });
}

void RedisStore::RemoveSigningKey(const std::string& key_id, Done durable) {
  Command(
      "remove_signing_key", {"HDEL", prefix_ + "keys", key_id},
      [key_id, durable = std::move(durable)](Result<RedisReply> r) {
        if (!r.ok()) return durable(r.status());
        if (r->integer() == 0) {
          return durable(Status::NotFound("no signing key is registered for \"" + key_id + "\""));
        }
        durable(Status::Ok());
      });
}

void RedisStore::ListSigningKeys(SigningKeysCallback cb) {
  Command("list_signing_keys", {"HGETALL", prefix_ + "keys"},
          [cb = std::move(cb)](Result<RedisReply> r) {
            if (!r.ok()) return cb(r.status());
            std::vector<StoredSigningKey> keys;
            for (auto& [id, pem] : SortedPairs(*r)) keys.push_back({id, pem});
            cb(std::move(keys));
          });
}

// Host state changes are announced on {NS}:hosts ("NODE HOST") right after the write, on the same
// connection, so a node that hears of one reads the new state.
void RedisStore::PutHostState(const HostStateRecord& record, Done durable) {
  Command("put_host_state", {"HSET", prefix_ + "hosts", record.host, HostStateJson(record)},
          [durable = std::move(durable)](Result<RedisReply> r) {
            durable(r.ok() ? Status::Ok() : r.status());
          });
  Command("publish_host_state",
          {"PUBLISH", prefix_ + "hosts", options_.node_id + " " + record.host},
          [](Result<RedisReply>) {});
}

void RedisStore::PublishWorkerSignal(const std::string& wid, const std::string& state) {
  Command("publish_worker_signal",
          {"PUBLISH", prefix_ + "signals", options_.node_id + " " + state + " " + wid},
          [](Result<RedisReply>) {});
}

void RedisStore::RemoveHostState(const std::string& host, Done durable) {
  Command("remove_host_state", {"HDEL", prefix_ + "hosts", host},
          [durable = std::move(durable)](Result<RedisReply> r) {
            durable(r.ok() ? Status::Ok() : r.status());
          });
  Command("publish_host_state", {"PUBLISH", prefix_ + "hosts", options_.node_id + " " + host},
          [](Result<RedisReply>) {});
}

void RedisStore::TryLease(const std::string& name, Duration ttl,
                          std::function<void(Result<bool>)> cb) {
  int64_t ms =
      std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(ttl).count());
  Eval(Script::kLease, "lease", {name, options_.node_id, std::to_string(ms), "take"},
       [cb = std::move(cb)](Result<RedisReply> r) {
         if (!r.ok()) return cb(r.status());
         cb(r->integer() == 1);
       });
}

void RedisStore::ReleaseLease(const std::string& name) {
  Eval(Script::kLease, "lease", {name, options_.node_id, "1", "release"},
       [](Result<RedisReply>) {});
}

void RedisStore::ListHostStates(HostStatesCallback cb) {
  Command("list_host_states", {"HGETALL", prefix_ + "hosts"},
          [cb = std::move(cb)](Result<RedisReply> r) {
            if (!r.ok()) return cb(r.status());
            std::vector<HostStateRecord> records;
            for (auto& [host, text] : SortedPairs(*r)) {
              auto record = ParseHostState(host, text);
              if (!record.ok()) return cb(record.status());
              records.push_back(std::move(*record));
            }
            cb(std::move(records));
          });
}

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

void RedisStore::FindJob(const std::string& jid, JobCallback cb) {
  Eval(Script::kFindJob, "find_job", {jid}, [jid, cb = std::move(cb)](Result<RedisReply> r) {
    if (!r.ok()) return cb(r.status());
    if (!r->is_array() || r->elements().size() != 2) return cb(std::optional<JobRecord>());
    const auto& e = r->elements();
    auto job = DecodeRedisJob(jid, e[0].str(), ScoreMicros(e[1]));
    if (!job.ok()) return cb(job.status());
    cb(std::optional<JobRecord>(std::move(*job)));
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
