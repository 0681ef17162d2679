// SharedRedis (tests only): one redis-server for a whole test binary, started on first use on a
// free loopback port and stopped at exit; tests share it by using their own namespaces
// (UniqueRedisNamespace).
#pragma once

#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "bulkhead/redis/testing/redis_server_process.h"

namespace bulkhead {

// The shared server, or nullptr when it could not start (`*error` says why).
inline RedisServerProcess* SharedRedis(std::string* error = nullptr) {
  static std::string failure;
  static std::unique_ptr<RedisServerProcess> server = [] {
    auto started = RedisServerProcess::Start();
    if (!started.ok()) {
      failure = started.status().ToString();
      return std::unique_ptr<RedisServerProcess>();
    }
    return std::move(*started);
  }();
  if (error) *error = failure;
  return server.get();
}

// A namespace no other test of this process (or an earlier run) uses.
inline std::string UniqueRedisNamespace(const std::string& hint) {
  static std::atomic<int> counter{0};
  return "t" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + hint;
}

}  // namespace bulkhead
