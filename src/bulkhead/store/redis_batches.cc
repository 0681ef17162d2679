#include "bulkhead/store/redis_batches.h"

#include <cstdlib>
#include <map>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

Status NoSuchBatch(const std::string& bid) { return Status::NotFound("No such batch " + bid); }

int64_t Int(const std::map<std::string, std::string>& h, const char* field) {
  auto it = h.find(field);
  return it == h.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
}

std::string Str(const std::map<std::string, std::string>& h, const char* field) {
  auto it = h.find(field);
  return it == h.end() ? std::string() : it->second;
}

// A callback as stored in the batch hash: its jid and its value (as scheduled), or a header only.
JobRecord Callback(const std::map<std::string, std::string>& h, const std::string& which) {
  JobRecord job;
  std::string jid = Str(h, (which + "_jid").c_str());
  std::string value = Str(h, (which + "_v").c_str());
  if (jid.empty() || value.empty()) return job;
  auto decoded = DecodeRedisJob(jid, value, 0);
  if (decoded.ok()) job = std::move(*decoded);
  job.jid = jid;
  return job;
}

}  // namespace

void RedisBatches::New(BatchRecord batch, TimePoint now, Done durable) {
  auto value = [](const JobRecord& job) {
    if (job.jid.empty()) return std::string();
    JobRecord scheduled = job;
    scheduled.state = JobState::kScheduled;
    return EncodeRedisJob(scheduled);
  };
  std::string bid = batch.bid, parent = batch.parent_bid;
  calls_.EvalReplicated(
      Script::kBatchNew, "batch_new",
      {bid, Us(now), parent, batch.description, Us(batch.created_us), batch.complete.jid,
       value(batch.complete), batch.success.jid, value(batch.success)},
      [bid, parent, durable = std::move(durable)](Result<RedisReply> r) {
        if (!r.ok()) return durable(r.status());
        if (r->integer() == 0) {
          return durable(Status::AlreadyExists("batch " + bid + " already exists"));
        }
        if (r->integer() < 0) return durable(NoSuchBatch(parent));
        durable(Status::Ok());
      });
}

void RedisBatches::Get(const std::string& bid, TimePoint now, BatchCallback cb) {
  calls_.Command("batch_get", {"HGETALL", calls_.key_prefix() + "batch:" + bid},
                 [bid, now_us = ToUnixMicros(now), cb = std::move(cb)](Result<RedisReply> r) {
                   if (!r.ok()) return cb(r.status());
                   std::map<std::string, std::string> h;
                   const auto& e = r->elements();
                   for (size_t i = 0; i + 1 < e.size(); i += 2) h[e[i].str()] = e[i + 1].str();
                   if (h.empty()) return cb(std::optional<BatchRecord>());
                   BatchRecord b;
                   b.bid = bid;
                   b.expires_us = Int(h, "expires");
                   if (b.expires_us != 0 && b.expires_us <= now_us)
                     return cb(std::optional<BatchRecord>());
                   b.parent_bid = Str(h, "parent");
                   b.description = Str(h, "desc");
                   b.created_us = Int(h, "created");
                   b.committed = Str(h, "committed") == "1";
                   b.total = Int(h, "total");
                   b.pending = Int(h, "pending");
                   b.failed = Int(h, "failed");
                   b.executed = Int(h, "executed");
                   b.complete_st = Str(h, "complete_st");
                   b.success_st = Str(h, "success_st");
                   b.told_parent = static_cast<int>(Int(h, "told"));
                   b.complete = Callback(h, "complete");
                   b.success = Callback(h, "success");
                   cb(std::optional<BatchRecord>(std::move(b)));
                 });
}

void RedisBatches::Commit(const std::string& bid, TimePoint now, Done durable) {
  calls_.EvalReplicated(Script::kBatchCommit, "batch_commit", {bid, Us(now)},
                        [bid, durable = std::move(durable)](Result<RedisReply> r) {
                          if (!r.ok()) return durable(r.status());
                          if (r->integer() == 0) return durable(NoSuchBatch(bid));
                          durable(Status::Ok());
                        });
}

void RedisBatches::PushMember(JobRecord job, const std::string& bid, TimePoint now, Done durable) {
  std::string jid = job.jid;
  calls_.EvalReplicated(
      Script::kPushMember, "push_member",
      {jid, EncodeRedisJob(job), Us(job.score), calls_.node(), bid, Us(now)},
      [jid, bid, durable = std::move(durable)](Result<RedisReply> r) {
        if (!r.ok()) return durable(r.status());
        if (r->integer() < 0) return durable(NoSuchBatch(bid));
        if (r->integer() == 0) {
          return durable(Status::AlreadyExists("jid " + jid + " is already known to the server"));
        }
        durable(Status::Ok());
      });
}

void RedisBatches::Expire(TimePoint now, size_t limit, CountCallback cb) {
  calls_.Eval(Script::kBatchExpire, "batch_expire", {Us(now), std::to_string(limit)},
              [cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                cb(static_cast<size_t>(r->integer()));
              });
}

void RedisBatches::Counts(std::function<void(Result<BatchCounts>)> cb) {
  calls_.Command(
      "batch_counts",
      {"HMGET", calls_.key_prefix() + "stats", kBatchCreatedCounter, kBatchCommittedCounter,
       kBatchExpiredCounter, kBatchSucceededCounter},
      [cb = std::move(cb)](Result<RedisReply> r) {
        if (!r.ok()) return cb(r.status());
        const auto& e = r->elements();
        auto at = [&](size_t i) {
          return i < e.size() && !e[i].is_nil() ? std::strtoll(e[i].str().c_str(), nullptr, 10)
                                                : 0LL;
        };
        cb(BatchCounts{.created = at(0), .committed = at(1), .expired = at(2), .succeeded = at(3)});
      });
}

}  // namespace bulkhead
