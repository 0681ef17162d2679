// RedisServerProcess (tests only): a real `redis-server` or `redis-sentinel` started on a free
// loopback port in its own temporary directory, and stopped (SIGTERM, then SIGKILL after 5 s) and
// its directory removed when the object is destroyed. Start returns once the server answers PING
// (within 10 s; otherwise an error with the server's log tail). The child also dies with the test
// process (PR_SET_PDEATHSIG), so a crashed test leaves no server behind.
// Threading: not thread-safe; one test thread.
//
//   auto primary = RedisServerProcess::Start({.password = "s3cret"});
//   ASSERT_TRUE(primary.ok()) << primary.status().ToString();
//   ... (*primary)->url() ...
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_connection.h"
#include "bulkhead/redis/redis_reply.h"
#include "bulkhead/redis/redis_url.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct RedisServerTls {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  // The name the readiness check expects in the certificate.
  std::string server_name = "localhost";
};

struct RedisServerOptions {
  uint16_t port = 0;         // 0: a free port; else this one (to restart a server where it was)
  std::string password;      // requirepass (and masterauth for replicas)
  bool persistence = false;  // false: no RDB snapshots, no AOF
  std::optional<RedisEndpoint> replica_of;  // start as a replica of this primary
  std::optional<RedisServerTls> tls;        // serve TLS only (no plain port)
  std::vector<std::string> extra_config;    // redis.conf lines appended as given
};

struct RedisSentinelOptions {
  std::string master_name = "mymaster";
  RedisEndpoint primary;
  std::string primary_password;  // auth-pass for the primary
  int quorum = 1;
  int down_after_ms = 1000;
  int failover_timeout_ms = 5000;
};

class RedisServerProcess {
 public:
  static Result<std::unique_ptr<RedisServerProcess>> Start(RedisServerOptions options = {});
  static Result<std::unique_ptr<RedisServerProcess>> StartSentinel(RedisSentinelOptions options);
  ~RedisServerProcess();
  RedisServerProcess(const RedisServerProcess&) = delete;
  RedisServerProcess& operator=(const RedisServerProcess&) = delete;

  // 127.0.0.1 and the port it listens on (the TLS port when TLS is on).
  RedisEndpoint endpoint() const { return {"127.0.0.1", port_}; }
  uint16_t port() const { return port_; }
  // redis://[:password@]127.0.0.1:PORT (rediss:// with TLS).
  std::string url() const;
  // Options to connect to this server (TLS with its CA, the password).
  RedisConnectOptions connect_options() const;
  const std::string& dir() const { return dir_; }
  bool running() const { return pid_ > 0; }

  // SIGTERM, then SIGKILL when it has not exited within 5 s; waits for it. Idempotent.
  void Stop();
  // SIGKILL now (a crash, `kill -9`), and waits for it. Idempotent.
  void Kill();
  // The last `lines` lines of the server's log.
  std::string LogTail(size_t lines = 20) const;

 private:
  RedisServerProcess() = default;
  static Result<std::unique_ptr<RedisServerProcess>> Launch(bool sentinel,
                                                            const std::string& config,
                                                            RedisServerOptions options);
  Status WaitUntilAnswering();

  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string dir_;
  std::string log_file_;
  RedisServerOptions options_;
};

// Runs one command on a private io_context and returns its reply (an error reply is OK); bounded
// by `timeout` (Unavailable naming the command when it expires). For test set-up and checks.
Result<RedisReply> BlockingRedisCommand(
    const RedisConnectOptions& options, std::vector<std::string> argv,
    std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Calls `condition` every 20 ms until it holds; Unavailable naming `what` when it still fails
// after `bound`. For conditions on other processes (a fail-over finishing) that no event reports.
Status WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds bound,
               const std::string& what);

}  // namespace bulkhead
