#include "bulkhead/store/redis_taken_marks.h"

#include <memory>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {
namespace {

// The answers of a PushMarked split into several script calls, given back together.
struct Pending {
  std::vector<Status> results;
  size_t calls_left = 0;
  TakenMarks::PushedCallback durable;
};

}  // namespace

void RedisTakenMarks::PushMarked(std::vector<MarkedJob> jobs, TimePoint until, TimePoint now,
                                 PushedCallback durable) {
  if (jobs.empty()) return durable({});
  auto pending = std::make_shared<Pending>();
  pending->results.resize(jobs.size());
  pending->calls_left = (jobs.size() + kPerCall - 1) / kPerCall;
  pending->durable = std::move(durable);
  for (size_t first = 0; first < jobs.size(); first += kPerCall) {
    size_t last = std::min(jobs.size(), first + kPerCall);
    std::vector<std::string> args{calls_.node(), Us(until), Us(now)};
    args.reserve(3 + 4 * (last - first));
    std::vector<std::string> jids;
    for (size_t i = first; i < last; ++i) {
      MarkedJob& m = jobs[i];
      jids.push_back(m.job.jid);
      args.push_back(m.job.jid);
      args.push_back(EncodeRedisJob(m.job));
      args.push_back(Us(m.job.score));
      args.push_back(std::move(m.mark));
    }
    calls_.EvalReplicated(
        Script::kPushMarked, "push_marked", std::move(args),
        [pending, first, jids = std::move(jids)](Result<RedisReply> r) {
          bool well_formed = r.ok() && r->is_array() && r->elements().size() == jids.size();
          for (size_t i = 0; i < jids.size(); ++i) {
            Status& out = pending->results[first + i];
            if (!r.ok()) {
              out = r.status();
            } else if (!well_formed) {
              out = Status::Internal("redis store: push_marked answered " +
                                     r->ToString().substr(0, 200));
            } else if (r->elements()[i].integer() == 0) {
              out = Status::AlreadyExists("jid " + jids[i] + " or its mark was taken already");
            }
          }
          if (--pending->calls_left == 0) pending->durable(std::move(pending->results));
        });
  }
}

void RedisTakenMarks::Forget(std::vector<std::string> marks, Done durable) {
  if (marks.empty()) {
    if (durable) durable(Status::Ok());
    return;
  }
  std::vector<std::string> argv{"ZREM", key()};
  for (std::string& m : marks) argv.push_back(std::move(m));
  calls_.Command("forget_marks", std::move(argv), [durable = std::move(durable)](auto r) {
    if (durable) durable(r.ok() ? Status::Ok() : r.status());
  });
}

void RedisTakenMarks::Expire(TimePoint now, size_t limit, CountCallback cb) {
  calls_.Eval(Script::kExpireMarks, "expire_marks", {Us(now), std::to_string(limit)},
              [cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                cb(static_cast<size_t>(r->integer()));
              });
}

void RedisTakenMarks::Count(CountCallback cb) {
  calls_.Command("count_marks", {"ZCARD", key()}, [cb = std::move(cb)](Result<RedisReply> r) {
    if (!r.ok()) return cb(r.status());
    cb(static_cast<size_t>(r->integer()));
  });
}

}  // namespace bulkhead
