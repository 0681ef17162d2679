#include "bulkhead/store/redis_throttles.h"

#include <cmath>

#include "bulkhead/store/redis_job_codec.h"
#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

std::string Micros(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

}  // namespace

void RedisThrottles::Fetch(const std::vector<std::string>& queues, const ThrottledFetch& throttled,
                           TimePoint now, JobCallback cb) {
  std::vector<std::string> args{std::to_string(ToUnixMicros(now)), calls_.node(), throttled.wid,
                                std::to_string(throttled.throttles.size())};
  for (const QueueThrottle& t : throttled.throttles) {
    args.insert(args.end(),
                {t.queue, std::to_string(t.limit), t.per_worker ? "1" : "0", Micros(t.timeout)});
  }
  args.insert(args.end(), queues.begin(), queues.end());
  calls_.Eval(Script::kFetchThrottled, "fetch_throttled", std::move(args),
              [this, cb = std::move(cb)](Result<RedisReply> r) { calls_.HandOut(r, cb); });
}

void RedisThrottles::Uses(const std::vector<QueueThrottle>& throttles, TimePoint now,
                          ThrottleUsesCallback cb) {
  if (throttles.empty()) return cb(std::vector<ThrottleUse>());
  std::vector<std::string> args{std::to_string(ToUnixMicros(now))};
  std::vector<std::string> queues;
  for (const QueueThrottle& t : throttles) {
    args.insert(args.end(), {t.queue, t.per_worker ? "1" : "0", Micros(t.timeout)});
    queues.push_back(t.queue);
  }
  calls_.Eval(Script::kThrottleUses, "throttle_uses", std::move(args),
              [queues = std::move(queues), cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                if (!r->is_array() || r->elements().size() != 2 * queues.size()) {
                  return cb(Status::Internal("throttle_uses.lua answered an unexpected reply"));
                }
                std::vector<ThrottleUse> uses;
                for (size_t i = 0; i < queues.size(); ++i) {
                  uses.push_back(ThrottleUse{
                      .queue = queues[i],
                      .in_use = static_cast<size_t>(r->elements()[2 * i].integer()),
                      .max_per_worker = static_cast<size_t>(r->elements()[2 * i + 1].integer())});
                }
                cb(std::move(uses));
              });
}

}  // namespace bulkhead
