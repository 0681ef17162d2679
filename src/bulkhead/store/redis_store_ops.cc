// RedisStore's operations: each builds one script call (or plain command) and maps its reply to
// what EmbeddedStore answers.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

// Jobs per page when Mutate reads a set, and per mutate.lua / clear.lua call.
constexpr size_t kMutatePage = 500;

const char* SetName(JobState s) {
  switch (s) {
    case JobState::kScheduled:
      return "scheduled";
    case JobState::kRetry:
      return "retry";
    case JobState::kDead:
      return "dead";
    case JobState::kWorking:
      return "working";
    case JobState::kQueued:
      break;
  }
  return "";
}

// A job about to enter its queue gets enqueued_at = now, as MemoryState::Move does.
void SetEnqueuedAt(JobRecord& job, int64_t now_us) {
  job.enqueued_us = now_us;
  auto doc = nlohmann::json::parse(job.payload, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object()) {
    doc["enqueued_at"] = FormatRfc3339(FromUnixMicros(now_us));
    job.payload = doc.dump();
  }
}

// {jid, value, score, ...} (range.lua) as jobs.
Result<std::vector<JobRecord>> DecodeTriples(const RedisReply& r) {
  std::vector<JobRecord> jobs;
  const auto& e = r.elements();
  jobs.reserve(e.size() / 3);
  for (size_t i = 0; i + 2 < e.size(); i += 3) {
    auto job = DecodeRedisJob(e[i].str(), e[i + 1].str(), ScoreMicros(e[i + 2]));
    if (!job.ok()) return job.status();
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

// Answers `cb` from a reply of {value, score} (get_working.lua, find_job.lua): the job `jid`, or
// none for any other reply.
std::function<void(Result<RedisReply>)> AnswerJob(const std::string& jid, Store::JobCallback cb) {
  return [jid, cb = std::move(cb)](Result<RedisReply> r) {
    if (!r.ok()) return cb(r.status());
    if (!r->is_array() || r->elements().size() != 2) return cb(std::optional<JobRecord>());
    const auto& e = r->elements();
    auto job = DecodeRedisJob(jid, e[0].str(), ScoreMicros(e[1]));
    if (!job.ok()) return cb(job.status());
    cb(std::optional<JobRecord>(std::move(*job)));
  };
}

}  // namespace

void RedisStore::Push(JobRecord job, Done durable) {
  std::string jid = job.jid;
  Coalesce(
      BatchKind::kPush, {}, {jid, EncodeRedisJob(job), Us(job.score)},
      [jid, durable = std::move(durable)](Result<RedisReply> r) {
        if (!r.ok()) return durable(r.status());
        if (r->integer() == 0) {
          return durable(Status::AlreadyExists("jid " + jid + " is already known to the server"));
        }
        durable(Status::Ok());
      });
}

void RedisStore::Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) {
  FetchFor(queues, std::string(), now, std::move(cb));
}

void RedisStore::FetchFor(const std::vector<std::string>& queues, const std::string& wid,
                          TimePoint now, JobCallback cb) {
  std::vector<std::string> item{Us(now), wid, std::to_string(queues.size())};
  item.insert(item.end(), queues.begin(), queues.end());
  Coalesce(BatchKind::kFetch, {}, std::move(item),
           [this, cb = std::move(cb)](Result<RedisReply> r) { HandOut(r, cb); });
}

void RedisStore::Ack(const std::string& jid, TimePoint now, JobCallback durable) {
  // A job this node handed out goes with its reservation (expiry and queue): ack.lua then ends
  // that reservation without reading the job and answers 1, and the answer is the job kept here.
  // Anything else (another node's job, a reservation extended since) is read.
  // The jid leaves handed_out_ with the answer (a failed ACK leaves the job reserved here, so a
  // reclaim must still keep it); a later FETCH of the same jid is answered after this ACK.
  std::optional<JobRecord> handed;
  if (auto it = handed_out_.find(jid); it != handed_out_.end()) handed = it->second;
  std::vector<std::string> item{jid, Us(now), handed ? Us(handed->score) : std::string(),
                                handed ? handed->queue : std::string()};
  Coalesce(BatchKind::kAck, Day(now), std::move(item),
           [this, alive = std::weak_ptr<bool>(alive_), jid, handed = std::move(handed),
            durable = std::move(durable)](Result<RedisReply> r) mutable {
             if (!r.ok()) return durable(r.status());
             if (handed && !alive.expired()) handed_out_.erase(jid);
             if (handed && r->is_integer() && r->integer() == 1) return durable(std::move(handed));
             if (!r->is_array() || r->elements().size() != 2) {
               return durable(std::optional<JobRecord>());
             }
             const auto& e = r->elements();
             auto job = DecodeRedisJobHeader(jid, e[0].str(), ScoreMicros(e[1]));
             if (!job.ok()) return durable(job.status());
             durable(std::optional<JobRecord>(std::move(*job)));
           });
}

void RedisStore::GetWorking(const std::string& jid, JobCallback cb) {
  Eval(Script::kGetWorking, "get_working", {jid}, AnswerJob(jid, std::move(cb)));
}

void RedisStore::FindJob(const std::string& jid, JobCallback cb) {
  Eval(Script::kFindJob, "find_job", {jid}, AnswerJob(jid, std::move(cb)));
}

void RedisStore::ExtendReservation(const std::string& jid, TimePoint until, Done durable) {
  Eval(Script::kExtend, "extend", {jid, Us(until)},
       [jid, durable = std::move(durable)](Result<RedisReply> r) {
         if (!r.ok()) return durable(r.status());
         if (r->integer() == 0) return durable(Status::NotFound("job " + jid + " is not reserved"));
         durable(Status::Ok());
       });
}

void RedisStore::Move(JobRecord job, TimePoint now, Done durable) {
  if (job.state == JobState::kQueued) SetEnqueuedAt(job, ToUnixMicros(now));
  std::string jid = job.jid;
  Eval(Script::kMove, "move",
       {jid, EncodeRedisJob(job, options_.node_id), Us(job.score), options_.node_id},
       [jid, durable = std::move(durable)](Result<RedisReply> r) {
         if (!r.ok()) return durable(r.status());
         if (r->integer() == 0) return durable(Status::NotFound("Job not found " + jid));
         durable(Status::Ok());
       });
}

void RedisStore::FailReserved(const std::string& jid, TimePoint reserved_until,
                              std::optional<JobRecord> next, bool count_failure, TimePoint now,
                              Done durable) {
  std::string value, score = "0";
  if (next) {
    if (next->state == JobState::kQueued) SetEnqueuedAt(*next, ToUnixMicros(now));
    value = EncodeRedisJob(*next, options_.node_id);
    score = Us(next->score);
  }
  EvalReplicated(Script::kFailReserved, "fail",
                 {jid, Us(reserved_until), std::move(value), score, count_failure ? "1" : "0",
                  Day(now), options_.node_id, Us(now)},
                 [jid, durable = std::move(durable)](Result<RedisReply> r) {
                   if (!r.ok()) return durable(r.status());
                   if (r->integer() == 0) {
                     return durable(Status::FailedPrecondition(
                         "job " + jid + " is no longer under that reservation"));
                   }
                   durable(Status::Ok());
                 });
}

void RedisStore::Remove(const std::string& jid, Done durable) {
  Eval(Script::kRemove, "remove", {jid}, OkOr(std::move(durable)));
}

void RedisStore::EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) {
  Eval(Script::kEnqueueDue, "enqueue_due",
       {SetName(set), Us(now), std::to_string(limit), options_.node_id},
       [cb = std::move(cb)](Result<RedisReply> r) {
         if (!r.ok()) return cb(r.status());
         std::vector<JobRecord> moved;
         const auto& e = r->elements();
         for (size_t i = 0; i + 1 < e.size(); i += 2) {
           auto job = DecodeRedisJobHeader(e[i].str(), e[i + 1].str(), 0);
           if (!job.ok()) return cb(job.status());
           moved.push_back(std::move(*job));
         }
         cb(std::move(moved));
       });
}

void RedisStore::ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) {
  Eval(Script::kRange, "expired_reservations", {"working", "due", Us(now), std::to_string(limit)},
       [cb = std::move(cb)](Result<RedisReply> r) {
         if (!r.ok()) return cb(r.status());
         cb(DecodeTriples(*r));
       });
}

void RedisStore::PurgeDead(TimePoint now, size_t limit, CountCallback cb) {
  Eval(Script::kPurgeDead, "purge_dead", {Us(now), std::to_string(limit)},
       [cb = std::move(cb)](Result<RedisReply> r) {
         if (!r.ok()) return cb(r.status());
         cb(static_cast<size_t>(r->integer()));
       });
}

void RedisStore::Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
                        Duration dead_ttl, CountCallback durable_once_done) {
  if (exclusive_) {  // after the Mutate that runs now, like every other call
    held_.push_back(
        [this, op, set, filter, now, dead_ttl, durable = std::move(durable_once_done)]() mutable {
          Mutate(op, set, filter, now, dead_ttl, std::move(durable));
        });
    return;
  }
  FlushBatch();  // the calls made before it go first
  exclusive_ = true;
  CountCallback durable = [this, alive = std::weak_ptr<bool>(alive_),
                           done = std::move(durable_once_done)](Result<size_t> r) {
    if (!alive.expired()) ReleaseHeld();
    done(std::move(r));
  };
  if (op == MutateOp::kClear) {
    ClearSet(SetName(set), 0, std::move(durable));
    return;
  }
  int64_t now_us = ToUnixMicros(now);
  int64_t ttl_us = std::chrono::duration_cast<std::chrono::microseconds>(dead_ttl).count();
  MutateMatching(op, SetName(set), filter, now_us, now_us + ttl_us, std::move(durable));
}

void RedisStore::ClearSet(std::string set, size_t cleared, CountCallback durable) {
  SendEval(Script::kClear, "clear", {set, std::to_string(kMutatePage)},
           [this, alive = std::weak_ptr<bool>(alive_), set, cleared,
            durable = std::move(durable)](Result<RedisReply> r) mutable {
             if (!r.ok()) return durable(r.status());
             size_t n = static_cast<size_t>(r->integer());
             if (n == 0 || alive.expired()) return durable(cleared + n);
             ClearSet(std::move(set), cleared + n, std::move(durable));
           });
}

void RedisStore::MutateMatching(MutateOp op, const std::string& set, MutateFilter filter,
                                int64_t now_us, int64_t dead_until_us, CountCallback durable) {
  // Read phase: the set's jobs page by page (offset paging), the matching jids kept in order.
  struct Scan {
    MutateOp op;
    std::string set;
    MutateFilter filter;
    int64_t now_us, dead_until_us;
    CountCallback durable;
    size_t offset = 0;
    std::shared_ptr<std::vector<std::string>> jids = std::make_shared<std::vector<std::string>>();
  };
  auto scan = std::make_shared<Scan>(
      Scan{op, set, std::move(filter), now_us, dead_until_us, std::move(durable)});
  auto page = std::make_shared<std::function<void()>>();
  std::weak_ptr<bool> alive = alive_;
  *page = [this, alive, scan, weak_page = std::weak_ptr<std::function<void()>>(page)] {
    auto self = weak_page.lock();
    SendEval(Script::kRange, "mutate",
             {scan->set, "index", std::to_string(scan->offset),
              std::to_string(scan->offset + kMutatePage - 1)},
             [this, alive, scan, self](Result<RedisReply> r) {
               if (!r.ok()) return scan->durable(r.status());
               auto jobs = DecodeTriples(*r);
               if (!jobs.ok()) return scan->durable(jobs.status());
               for (const JobRecord& job : *jobs) {
                 if (scan->filter.Matches(job)) scan->jids->push_back(job.jid);
               }
               if (alive.expired()) return;
               if (r->elements().size() / 3 == kMutatePage) {
                 scan->offset += kMutatePage;
                 (*self)();
                 return;
               }
               ApplyMutate(scan->op, scan->set, scan->jids, 0, scan->now_us, scan->dead_until_us, 0,
                           std::move(scan->durable));
             });
  };
  (*page)();
}

void RedisStore::ApplyMutate(MutateOp op, std::string set,
                             std::shared_ptr<std::vector<std::string>> jids, size_t from,
                             int64_t now_us, int64_t dead_until_us, size_t changed,
                             CountCallback durable) {
  if (from >= jids->size()) {
    boost::asio::post(io_, [durable = std::move(durable), changed] { durable(changed); });
    return;
  }
  const char* name = op == MutateOp::kKill      ? "kill"
                     : op == MutateOp::kDiscard ? "discard"
                                                : "requeue";
  std::vector<std::string> args{name, set, Us(now_us), Us(dead_until_us), options_.node_id};
  size_t to = std::min(jids->size(), from + kMutatePage);
  args.insert(args.end(), jids->begin() + from, jids->begin() + to);
  SendEval(Script::kMutate, "mutate", std::move(args),
           [this, alive = std::weak_ptr<bool>(alive_), op, set, jids, to, now_us, dead_until_us,
            changed, durable = std::move(durable)](Result<RedisReply> r) mutable {
             if (!r.ok()) return durable(r.status());
             size_t n = changed + static_cast<size_t>(r->integer());
             if (to >= jids->size() || alive.expired()) return durable(n);
             ApplyMutate(op, std::move(set), jids, to, now_us, dead_until_us, n,
                         std::move(durable));
           });
}

void RedisStore::SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) {
  std::vector<std::string> args{paused ? "1" : "0", options_.node_id};
  args.insert(args.end(), queues.begin(), queues.end());
  Eval(Script::kSetPaused, "set_paused", std::move(args), OkOr(std::move(durable)));
}

void RedisStore::RemoveQueues(const std::vector<std::string>& queues, Done durable) {
  Eval(Script::kRemoveQueues, "remove_queues", queues, OkOr(std::move(durable)));
}

void RedisStore::CountOutcome(int64_t processed, int64_t failures, TimePoint now) {
  Eval(Script::kCountOutcome, "count_outcome",
       {std::to_string(processed), std::to_string(failures), Day(now)},
       [](Result<RedisReply>) {});  // no callback: a lost count is lost (as with a crash)
}

void RedisStore::Flush(Done durable) {
  Eval(Script::kFlush, "flush", {}, OkOr(std::move(durable)));
}

}  // namespace bulkhead
