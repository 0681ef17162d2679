#include "bulkhead/replay/sidekiq_redis.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "bulkhead/bridge/sidekiq_time.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

redisContext* Ctx(void* c) { return static_cast<redisContext*>(c); }

struct ReplyDeleter {
  void operator()(redisReply* r) const {
    if (r != nullptr) freeReplyObject(r);
  }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

Result<Reply> Command(void* c, std::initializer_list<std::string_view> argv) {
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (auto a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  Reply r(static_cast<redisReply*>(
      redisCommandArgv(Ctx(c), static_cast<int>(args.size()), args.data(), lens.data())));
  if (r == nullptr) return Status::Unavailable(std::string("app redis: ") + Ctx(c)->errstr);
  if (r->type == REDIS_REPLY_ERROR) {
    return Status::Internal("app redis: " + std::string(r->str, r->len));
  }
  return r;
}

}  // namespace

Result<std::unique_ptr<SidekiqRedis>> SidekiqRedis::Connect(int port,
                                                            std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = timeout.count() / 1000;
  tv.tv_usec = (timeout.count() % 1000) * 1000;
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (c == nullptr) return Status::Unavailable("app redis: cannot allocate a context");
  if (c->err != 0) {
    std::string why = c->errstr;
    redisFree(c);
    return Status::Unavailable("app redis 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  redisSetTimeout(c, tv);
  return std::unique_ptr<SidekiqRedis>(new SidekiqRedis(c));
}

SidekiqRedis::~SidekiqRedis() { redisFree(Ctx(context_)); }

Status SidekiqRedis::Push(std::string_view queue, std::string_view klass,
                          const nlohmann::json& args, const nlohmann::json& retry) {
  auto now = SidekiqTimestamp(SystemClock::Instance().Now(), SidekiqTimeFormat::kFloatSeconds);
  nlohmann::json job = {{"class", klass},    {"args", args},         {"retry", retry},
                        {"queue", queue},    {"jid", RandomHex(12)}, {"created_at", now},
                        {"enqueued_at", now}};
  const std::string list = "queue:" + std::string(queue);
  const std::string text = job.dump();
  for (auto argv : {std::initializer_list<std::string_view>{"MULTI"},
                    std::initializer_list<std::string_view>{"SADD", "queues", queue},
                    std::initializer_list<std::string_view>{"LPUSH", list, text},
                    std::initializer_list<std::string_view>{"EXEC"}}) {
    auto r = Command(context_, argv);
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

Result<int64_t> SidekiqRedis::Integer(const char* command, const std::string& key) {
  auto r = Command(context_, {command, key});
  if (!r.ok()) return r.status();
  return static_cast<int64_t>((*r)->integer);
}

Result<int64_t> SidekiqRedis::SortedSetSize(const std::string& key) {
  return Integer("ZCARD", key);
}

Result<int64_t> SidekiqRedis::SetSize(const std::string& key) { return Integer("SCARD", key); }

Result<double> SidekiqRedis::QueueLatencyMs(const std::string& name) {
  auto r = Command(context_, {"LRANGE", "queue:" + name, "-1", "-1"});
  if (!r.ok()) return r.status();
  if ((*r)->type != REDIS_REPLY_ARRAY || (*r)->elements == 0) return 0.0;
  const redisReply* e = (*r)->element[0];
  auto job = nlohmann::json::parse(std::string_view(e->str, e->len), nullptr, false);
  if (!job.is_object() || !job.contains("enqueued_at")) return 0.0;
  auto at = ReadSidekiqTimestamp(job["enqueued_at"]);
  if (!at) return 0.0;
  return std::max(
      0.0, std::chrono::duration<double, std::milli>(SystemClock::Instance().Now() - *at).count());
}

}  // namespace bulkhead
