// RedisStore's calls to Redis: holding them behind a multi-step Mutate, sending them through the
// commands' client, WAIT for durability = "replicated", and what a reply means as a Status.
#include <memory>
#include <optional>

#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {

Status RedisStore::ReplyError(const Result<RedisReply>& r, const char* step) {
  if (!r.ok()) return Status::Unavailable("store unavailable: " + r.status().message());
  if (!r->is_error()) return Status::Ok();
  const std::string& text = r->str();
  if (r->IsErrorCode("READONLY")) return Status::Unavailable("store unavailable: " + text);
  if (r->IsErrorCode("OOM") || text.find("OOM command not allowed") != std::string::npos) {
    return Status::ResourceExhausted("redis refused the " + std::string(step) + ": " + text);
  }
  return Status::Internal("redis store " + std::string(step) + " failed: " + text);
}

RedisStore::ReplyCallback RedisStore::Answering(const char* step, ReplyCallback cb) {
  return [step, cb = std::move(cb)](Result<RedisReply> r) {
    Status s = ReplyError(r, step);
    if (!s.ok()) {
      cb(s);
      return;
    }
    cb(std::move(r));
  };
}

void RedisStore::Command(const char* step, std::vector<std::string> argv, ReplyCallback cb) {
  FlushBatch();
  if (exclusive_) {
    held_.push_back([this, step, argv = std::move(argv), cb = std::move(cb)]() mutable {
      Command(step, std::move(argv), std::move(cb));
    });
    return;
  }
  SendCommand(step, std::move(argv), std::move(cb));
}

void RedisStore::Eval(Script script, const char* step, std::vector<std::string> args,
                      ReplyCallback cb) {
  FlushBatch();
  if (exclusive_) {
    held_.push_back([this, script, step, args = std::move(args), cb = std::move(cb)]() mutable {
      Eval(script, step, std::move(args), std::move(cb));
    });
    return;
  }
  SendEval(script, step, std::move(args), std::move(cb));
}

void RedisStore::ReleaseHeld() {
  exclusive_ = false;
  while (!exclusive_ && !held_.empty()) {
    auto call = std::move(held_.front());
    held_.pop_front();
    call();
  }
}

void RedisStore::SendCommand(const char* step, std::vector<std::string> argv, ReplyCallback cb) {
  FlushBatch();
  commands_->Send(argv, Answering(step, std::move(cb)));
}

void RedisStore::SendEval(Script script, const char* step, std::vector<std::string> args,
                          ReplyCallback cb) {
  FlushBatch();
  args.insert(args.begin(), prefix_);
  commands_->Eval(scripts_[script], {jobs_key_}, std::move(args), Answering(step, std::move(cb)));
}

RedisStore::ReplyCallback RedisStore::AnsweringSetup(const char* step, ReplyCallback cb) {
  return [step, cb = std::move(cb)](Result<RedisReply> r) {
    if (r.ok() && r->is_error()) return cb(ReplyError(r, step));
    cb(std::move(r));
  };
}

void RedisStore::RawCommand(const char* step, std::vector<std::string> argv, ReplyCallback cb) {
  commands_->SendRaw(argv, AnsweringSetup(step, std::move(cb)));
}

void RedisStore::RawEval(Script script, const char* step, std::vector<std::string> args,
                         ReplyCallback cb) {
  args.insert(args.begin(), prefix_);
  commands_->EvalRaw(scripts_[script], {jobs_key_}, std::move(args),
                     AnsweringSetup(step, std::move(cb)));
}

void RedisStore::EvalReplicated(Script script, const char* step, std::vector<std::string> args,
                                ReplyCallback cb) {
  if (!options_.replicated) {
    Eval(script, step, std::move(args), std::move(cb));
    return;
  }
  auto reply = std::make_shared<std::optional<Result<RedisReply>>>();
  Eval(script, step, std::move(args), [reply](Result<RedisReply> r) { *reply = std::move(r); });
  int64_t timeout_ms = options_.wait_timeout.count();
  Command("wait", {"WAIT", "1", std::to_string(timeout_ms)},
          [reply, timeout_ms, cb = std::move(cb)](Result<RedisReply> w) {
            // Replies come in order: the script's has arrived.
            Result<RedisReply> r = std::move(**reply);
            if (!r.ok() || !w.ok()) {
              cb(!r.ok() ? r : w);
              return;
            }
            if (w->integer() < 1) {
              cb(Status::Unavailable("no replica acknowledged the write within " +
                                     std::to_string(timeout_ms) + " ms"));
              return;
            }
            cb(std::move(r));
          });
}

}  // namespace bulkhead
