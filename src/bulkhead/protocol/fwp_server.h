// FwpServer: the Faktory work protocol listener. Accepts connections (bounded by
// max_connections), owns the set of live sessions, and counts what INFO reports.
//
// Threading: event loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <map>
#include <memory>
#include <string>

#include "bulkhead/config/config.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class Session;

class FwpServer {
 public:
  FwpServer(boost::asio::io_context& io, Engine& engine, const Config& config, Rng& rng);
  ~FwpServer();

  // Binds and starts accepting. Port 0 picks a free port (see port()).
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return port_; }
  // Stops accepting and closes every session.
  void Stop();

  Engine& engine() { return engine_; }
  const Config& config() const { return config_; }
  Rng& rng() { return rng_; }
  ServerCounters counters() const;
  void CountCommand() { ++command_count_; }
  bool stopping() const { return stopping_; }

  // Called by a session as it closes.
  void OnSessionClosed(uint64_t id, const std::string& wid);
  // Closes every connection identified with `wid` (the worker was reaped).
  void CloseWorker(const std::string& wid);

 private:
  void DoAccept();

  Engine& engine_;
  const Config& config_;
  Rng& rng_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::map<uint64_t, std::weak_ptr<Session>> sessions_;
  uint64_t next_id_ = 1;
  int64_t command_count_ = 0;
  bool stopping_ = false;
};

}  // namespace bulkhead
