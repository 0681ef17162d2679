#include "bulkhead/redis/testing/redis_server_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace bulkhead {
namespace {

constexpr auto kStartBound = std::chrono::seconds(10);
constexpr auto kStopBound = std::chrono::seconds(5);

// A port nobody listens on right now (the kernel's pick for port 0). Another process may take it
// before the server binds; Start retries on "Address already in use".
Result<uint16_t> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status::Internal("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return Status::Internal("cannot bind a loopback port");
  }
  close(fd);
  return static_cast<uint16_t>(ntohs(addr.sin_port));
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

// Waits up to `bound` for `pid` to exit; true when it did (and was reaped).
bool WaitExit(pid_t pid, std::chrono::milliseconds bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string ServerConfig(uint16_t port, const RedisServerOptions& o) {
  std::ostringstream c;
  // A replica's first sync starts at once (Redis 7 waits 5 s for more replicas by default).
  c << "bind 127.0.0.1\nrepl-diskless-sync-delay 0\n";
  if (o.tls) {
    c << "port 0\ntls-port " << port << "\ntls-cert-file " << Quote(o.tls->cert_file)
      << "\ntls-key-file " << Quote(o.tls->key_file) << "\ntls-ca-cert-file "
      << Quote(o.tls->ca_file) << "\ntls-auth-clients no\n";
  } else {
    c << "port " << port << "\n";
  }
  if (!o.persistence) c << "save \"\"\nappendonly no\n";
  if (!o.password.empty()) {
    c << "requirepass " << Quote(o.password) << "\nmasterauth " << Quote(o.password) << "\n";
  }
  if (o.replica_of) c << "replicaof " << o.replica_of->host << " " << o.replica_of->port << "\n";
  for (const std::string& line : o.extra_config) c << line << "\n";
  return c.str();
}

}  // namespace

Result<std::unique_ptr<RedisServerProcess>> RedisServerProcess::Start(RedisServerOptions options) {
  return Launch(false, "", std::move(options));
}

Result<std::unique_ptr<RedisServerProcess>> RedisServerProcess::StartSentinel(
    RedisSentinelOptions o) {
  std::ostringstream c;
  const std::string& m = o.master_name;
  c << "sentinel monitor " << m << " " << o.primary.host << " " << o.primary.port << " " << o.quorum
    << "\n"
    << "sentinel down-after-milliseconds " << m << " " << o.down_after_ms << "\n"
    << "sentinel failover-timeout " << m << " " << o.failover_timeout_ms << "\n";
  if (!o.primary_password.empty())
    c << "sentinel auth-pass " << m << " " << o.primary_password << "\n";
  return Launch(true, c.str(), RedisServerOptions{});
}

Result<std::unique_ptr<RedisServerProcess>> RedisServerProcess::Launch(
    bool sentinel, const std::string& sentinel_config, RedisServerOptions options) {
  char tmpl[] = "/tmp/bulkhead-redis-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return Status::Internal("mkdtemp failed");
  std::unique_ptr<RedisServerProcess> p(new RedisServerProcess());
  p->dir_ = tmpl;
  p->log_file_ = p->dir_ + "/server.log";
  p->options_ = std::move(options);
  Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Result<uint16_t> port = p->options_.port != 0 ? p->options_.port : FreePort();
    if (!port.ok()) return port.status();
    p->port_ = *port;
    std::string conf_file = p->dir_ + "/redis.conf";
    {
      std::ofstream conf(conf_file, std::ios::trunc);
      conf << "dir " << Quote(p->dir_) << "\nlogfile \"\"\ndaemonize no\n";
      if (sentinel) {
        conf << "bind 127.0.0.1\nport " << p->port_ << "\n" << sentinel_config;
      } else {
        conf << ServerConfig(p->port_, p->options_);
      }
    }
    std::string binary = sentinel ? "redis-sentinel" : "redis-server";
    pid_t pid = fork();
    if (pid < 0) return Status::Internal("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = open(p->log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execlp(binary.c_str(), binary.c_str(), conf_file.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    p->pid_ = pid;
    last = p->WaitUntilAnswering();
    if (last.ok()) return p;
    p->Kill();
    if (p->options_.port != 0 ||
        p->LogTail(50).find("Address already in use") == std::string::npos) {
      break;
    }
  }
  return last;
}

Status RedisServerProcess::WaitUntilAnswering() {
  RedisConnectOptions options = connect_options();
  options.connect_timeout = std::chrono::milliseconds(500);
  auto deadline = std::chrono::steady_clock::now() + kStartBound;
  std::string last = "no answer";
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::Unavailable("redis server on port " + std::to_string(port_) +
                                 " exited at start; log tail:\n" + LogTail());
    }
    Result<RedisReply> r = BlockingRedisCommand(options, {"PING"}, std::chrono::seconds(1));
    if (r.ok() && r->Is("PONG")) return Status::Ok();
    last = r.ok() ? r->ToString() : r.status().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Unavailable("redis server on port " + std::to_string(port_) +
                             " did not answer PING within 10 s (last: " + last + "); log tail:\n" +
                             LogTail());
}

RedisServerProcess::~RedisServerProcess() {
  Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string RedisServerProcess::url() const {
  std::string auth = options_.password.empty() ? "" : ":" + options_.password + "@";
  return std::string(options_.tls ? "rediss://" : "redis://") + auth + endpoint().ToString();
}

RedisConnectOptions RedisServerProcess::connect_options() const {
  RedisConnectOptions o;
  o.endpoint = endpoint();
  o.password = options_.password;
  if (options_.tls) {
    o.tls = true;
    o.tls_ca_file = options_.tls->ca_file;
    o.tls_server_name = options_.tls->server_name;
  }
  return o;
}

void RedisServerProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  if (!WaitExit(pid_, kStopBound)) {
    kill(pid_, SIGKILL);
    WaitExit(pid_, kStopBound);
  }
  pid_ = -1;
}

void RedisServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  WaitExit(pid_, kStopBound);
  pid_ = -1;
}

std::string RedisServerProcess::LogTail(size_t lines) const {
  std::ifstream in(log_file_);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += all[i] + "\n";
  }
  return out;
}

Result<RedisReply> BlockingRedisCommand(const RedisConnectOptions& options,
                                        std::vector<std::string> argv,
                                        std::chrono::milliseconds timeout) {
  boost::asio::io_context io;
  RedisConnection conn(io, options);
  std::string what = argv.empty() ? "" : argv[0];
  std::optional<Result<RedisReply>> result;
  conn.Connect([&](Status s) {
    if (!s.ok()) {
      result = s;
      return;
    }
    conn.Send(std::move(argv), [&](Result<RedisReply> r) { result = std::move(r); });
  });
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!result && std::chrono::steady_clock::now() < deadline) {
    io.run_one_until(deadline);
  }
  if (!result) {
    return Status::Unavailable("redis " + options.endpoint.ToString() + ": " + what +
                               " got no answer within " + std::to_string(timeout.count()) + " ms");
  }
  return std::move(*result);
}

Status WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds bound,
               const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable(what + ": still not true after " + std::to_string(bound.count()) +
                                 " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Ok();
}

}  // namespace bulkhead
