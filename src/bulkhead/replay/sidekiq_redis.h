// SidekiqRedis: the replay's synchronous view of the application's Redis as Sidekiq lays it out
// (`bulkhead replay --pipeline sidekiq`): it pushes jobs exactly as Sidekiq::Client does and reads
// the figures an operator watches in Sidekiq's Web UI. hiredis, blocking, one connection.
//
// Keys (Sidekiq 6.4, lib/sidekiq/client.rb atomic_push and lib/sidekiq/api.rb):
//   queue:NAME  a list, LPUSHed by clients, BRPOPed by the processes (oldest at the right end)
//   queues      the set of known queue names
//   retry, dead sorted sets of failed jobs waiting for a retry, and of dead ones
//   processes   the set of running Sidekiq processes (heartbeat)
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

// Not thread-safe: one owner thread.
class SidekiqRedis {
 public:
  // Connects to 127.0.0.1:`port` within `timeout`. Unavailable names the cause.
  static Result<std::unique_ptr<SidekiqRedis>> Connect(int port, std::chrono::milliseconds timeout);
  ~SidekiqRedis();
  SidekiqRedis(const SidekiqRedis&) = delete;
  SidekiqRedis& operator=(const SidekiqRedis&) = delete;

  // Pushes a Sidekiq job of `klass` with `args` (a JSON array) onto queue `queue`, as
  // Sidekiq::Client#push writes it: {"class", "args", "retry", "queue", "jid" (24 hex),
  // "created_at", "enqueued_at" (float seconds)}, then SADD queues + LPUSH queue:NAME in one
  // MULTI/EXEC.
  Status Push(std::string_view queue, std::string_view klass, const nlohmann::json& args,
              const nlohmann::json& retry);

  // ZCARD / SCARD of `key`.
  Result<int64_t> SortedSetSize(const std::string& key);
  Result<int64_t> SetSize(const std::string& key);
  // Sidekiq::Queue#latency: how long the oldest job of queue `name` has waited (now minus its
  // enqueued_at), in ms; 0 when the queue is empty.
  Result<double> QueueLatencyMs(const std::string& name);

 private:
  explicit SidekiqRedis(void* context) : context_(context) {}
  Result<int64_t> Integer(const char* command, const std::string& key);

  void* context_;  // redisContext*
};

}  // namespace bulkhead
