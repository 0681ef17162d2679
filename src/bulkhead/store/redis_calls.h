// RedisCalls: how the Redis store's parts (redis_<part>.h) reach Redis: through the store's own
// calls, so that each takes effect in call order with every other call of the store (held behind
// a multi-step Mutate, after the coalesced Push/Fetch/Ack calls before it; redis_store.h), and
// its reply maps to a Status the same way. Internal to the Redis store; RedisStore implements it
// and outlives its parts.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_reply.h"
#include "bulkhead/store/redis_script_id.h"
#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class RedisCalls {
 public:
  using ReplyCallback = std::function<void(Result<RedisReply>)>;

  // Runs `script` with ARGV = prefix, args...; `cb` gets the reply, or the Status the reply
  // means (transport failure, error reply; see redis_store.h) with `step` in its message.
  // While a multi-step Mutate runs, the call is held and sent after it (calls take effect in
  // order).
  virtual void Eval(Script script, const char* step, std::vector<std::string> args,
                    ReplyCallback cb) = 0;
  // Eval, then (durability = "replicated") WAIT for one replica before answering.
  virtual void EvalReplicated(Script script, const char* step, std::vector<std::string> args,
                              ReplyCallback cb) = 0;
  // Sends a plain command, with the same mapping (and holding) as Eval.
  virtual void Command(const char* step, std::vector<std::string> argv, ReplyCallback cb) = 0;
  // Answers a FETCH's `cb` from its reply ({jid, value, score}: a job, reserved; anything else:
  // none) and remembers a job handed out with its reservation (redis_store_reclaim.cc).
  virtual void HandOut(const Result<RedisReply>& reply, const StoreCallbacks::JobCallback& cb) = 0;
  // "{NS}:", which starts every key; this node's id.
  virtual const std::string& key_prefix() const = 0;
  virtual const std::string& node() const = 0;

 protected:
  ~RedisCalls() = default;
};

}  // namespace bulkhead
