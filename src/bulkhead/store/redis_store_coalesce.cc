// RedisStore's coalescing of Push, Fetch and Ack (redis_store.h, "Coalescing"): the
// calls of one turn of the loop go out as one script call, which Redis runs for a fraction of the
// cost of one call each (the prelude, the command's dispatch and the reply are paid once per
// batch).
#include <boost/asio/post.hpp>

#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"

namespace bulkhead {
namespace {

// Calls per script call at most: bounds the time one script holds Redis (a PUSHB of 1000 jobs
// goes out in a few calls).
constexpr size_t kMaxBatch = 256;

}  // namespace

void RedisStore::Coalesce(BatchKind kind, std::string_view key, std::vector<std::string> item,
                          ReplyCallback cb) {
  if (exclusive_) {  // after the Mutate that runs now, like every other call
    held_.push_back(
        [this, kind, key = std::string(key), item = std::move(item), cb = std::move(cb)]() mutable {
          Coalesce(kind, key, std::move(item), std::move(cb));
        });
    return;
  }
  if (batch_kind_ != kind || batch_key_ != key || batch_cbs_.size() >= kMaxBatch) FlushBatch();
  batch_kind_ = kind;
  batch_key_ = std::string(key);
  for (std::string& a : item) batch_args_.push_back(std::move(a));
  batch_cbs_.push_back(std::move(cb));
  if (!batch_flush_posted_) {
    batch_flush_posted_ = true;
    boost::asio::post(io_, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (alive.expired()) return;
      batch_flush_posted_ = false;
      FlushBatch();
    });
  }
}

void RedisStore::FlushBatch() {
  if (batch_cbs_.empty()) return;
  BatchKind kind = batch_kind_;
  std::vector<std::string> args;
  args.reserve(batch_args_.size() + 2);
  // push.lua and fetch.lua take the node, ack.lua the day and the node, ahead of the calls' parts.
  if (kind == BatchKind::kAck) args.push_back(std::move(batch_key_));
  args.push_back(options_.node_id);
  for (std::string& a : batch_args_) args.push_back(std::move(a));
  auto cbs = std::make_shared<std::vector<ReplyCallback>>(std::move(batch_cbs_));
  batch_kind_ = BatchKind::kNone;
  batch_key_.clear();
  batch_args_.clear();
  batch_cbs_.clear();
  // Each call's answer is its element of the script's array (fetch.lua: its three elements, as
  // the array {jid, value, score}, or nil when the first is); a failed call fails them all.
  const size_t per = kind == BatchKind::kFetch ? 3 : 1;
  ReplyCallback answer = [cbs, per](Result<RedisReply> r) {
    if (!r.ok() || !r->is_array() || r->elements().size() != per * cbs->size()) {
      Result<RedisReply> failure =
          !r.ok()
              ? r
              : Result<RedisReply>(Status::Internal("redis store: a coalesced script answered " +
                                                    r->ToString().substr(0, 200)));
      for (auto& cb : *cbs) cb(failure);
      return;
    }
    std::vector<RedisReply>& e = r->mutable_elements();
    for (size_t i = 0; i < cbs->size(); ++i) {
      if (per == 1) {
        (*cbs)[i](std::move(e[i]));
      } else if (e[per * i].is_nil()) {
        (*cbs)[i](RedisReply::OfNil());
      } else {
        (*cbs)[i](RedisReply::OfArray({std::make_move_iterator(e.begin() + per * i),
                                       std::make_move_iterator(e.begin() + per * (i + 1))}));
      }
    }
  };
  switch (kind) {
    case BatchKind::kPush:
      EvalReplicated(Script::kPush, "push", std::move(args), std::move(answer));
      break;
    case BatchKind::kAck:
      EvalReplicated(Script::kAck, "ack", std::move(args), std::move(answer));
      break;
    case BatchKind::kFetch:
    case BatchKind::kNone:
      Eval(Script::kFetch, "fetch", std::move(args), std::move(answer));
      break;
  }
}

}  // namespace bulkhead
