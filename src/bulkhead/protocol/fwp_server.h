// FwpServer: the Faktory work protocol listener. Accepts connections (bounded by
// max_connections), owns the set of live sessions, and counts what INFO reports. Out of file
// descriptors, its GuardedAcceptor refuses the waiting connections with an error line.
//
// Threading: event loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "bulkhead/config/config.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/protocol/login_throttle.h"
#include "bulkhead/util/descriptors.h"
#include "bulkhead/util/guard_counters.h"
#include "bulkhead/util/guarded_acceptor.h"
#include "bulkhead/util/log_limiter.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/status.h"
#include "bulkhead/util/tls_server_context.h"

namespace bulkhead {

class Session;

// Figures the protocol server contributes to INFO (FwpServer::counters()).
struct ServerCounters {
  int64_t connections = 0;
  int64_t command_count = 0;
};

class FwpServer {
 public:
  FwpServer(boost::asio::io_context& io, Engine& engine, const Config& config, Rng& rng);
  ~FwpServer();

  // Serve TLS only, with `tls`'s current certificate for each new connection (call before
  // Listen; `tls` outlives the server). nullptr: plain TCP.
  void SetTls(const TlsServerContext* tls) { tls_ = tls; }
  bool tls() const { return tls_ != nullptr; }

  // Binds and starts accepting. Port 0 picks a free port (see port()).
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return acceptor_.port(); }
  // Stops accepting and closes every session.
  void Stop();

  // The loop every session runs on; their timers run on the engine's clock.
  boost::asio::io_context& io() { return io_; }
  Engine& engine() { return engine_; }
  const Config& config() const { return config_; }
  Rng& rng() { return rng_; }
  ServerCounters counters() const;
  void CountCommand() { ++command_count_; }

  // The INFO document comes from whoever assembles the process (server/Server renders it with
  // view/info_json.h). Info() asks the source; without one it answers Unavailable.
  using InfoCallback = std::function<void(Result<std::string>)>;
  void SetInfoSource(std::function<void(InfoCallback)> source) { info_source_ = std::move(source); }
  void Info(InfoCallback cb);

  bool stopping() const { return stopping_; }

  // Protections against hostile clients, shared by every session.
  LoginThrottle& login_throttle() { return login_throttle_; }
  LogLimiter& log_limiter() { return log_limiter_; }
  GuardCounters& guards() { return guards_; }
  const GuardCounters& guards() const { return guards_; }

  // Connections past max_connections are still greeted (their HELLO is then refused, as the
  // reference server does) up to this many more; beyond that they are refused at accept.
  static constexpr int kOverflowConnections = 64;

  // A TLS handshake failed or did not finish in time: counted, and logged rate-limited with a
  // hint when the bytes looked like a plain-TCP client.
  void NoteTlsHandshakeFailure(const std::string& peer, const std::string& reason);

  // Called by a session as it closes.
  void OnSessionClosed(uint64_t id, const std::string& wid);
  // Closes every connection identified with `wid` (the worker was reaped) once the replies
  // already made ready reach it: a job handed to a FETCH just before is not stranded.
  void CloseWorker(const std::string& wid);

 private:
  void OnAccepted(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& io_;
  Engine& engine_;
  const Config& config_;
  Rng& rng_;
  std::function<void(InfoCallback)> info_source_;
  GuardCounters guards_;  // before acceptor_, which counts into it
  GuardedAcceptor acceptor_;
  LoginThrottle login_throttle_;
  LogLimiter log_limiter_;
  const TlsServerContext* tls_ = nullptr;
  std::map<uint64_t, std::weak_ptr<Session>> sessions_;
  uint64_t next_id_ = 1;
  int64_t command_count_ = 0;
  bool stopping_ = false;
};

}  // namespace bulkhead
