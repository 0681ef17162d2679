// GuardedAcceptor: the accept loop every listener shares (FWP, HTTP). It binds with ListenTcp and
// hands each accepted socket to the owner. When accept fails for lack of descriptors it refuses
// the connections waiting in the backlog through a DescriptorReserve (writing `refusal` to each),
// counts them, and pauses accepting for 100 ms instead of spinning on a failing accept; accept
// errors are logged rate-limited.
// Threading: event loop thread only.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <string>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/descriptors.h"
#include "bulkhead/util/log_limiter.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class GuardedAcceptor {
 public:
  using OnSocket = std::function<void(boost::asio::ip::tcp::socket)>;

  // `what` names the listener in logs ("Faktory protocol", "HTTP"); `refusal` is written to a
  // connection refused for lack of descriptors; `refused` counts those connections (outlives
  // this); `open_connections` is logged with the failure.
  GuardedAcceptor(boost::asio::io_context& io, const Clock& clock, std::string what,
                  std::string refusal, std::atomic<int64_t>& refused,
                  std::function<size_t()> open_connections);

  // Binds host:port (0 picks a free port) and starts accepting; `on_socket` gets every accepted
  // connection.
  Status Listen(const std::string& host, uint16_t port, OnSocket on_socket);
  uint16_t port() const { return port_; }
  // Stops accepting. Idempotent.
  void Stop();

 private:
  void DoAccept();
  void OnOutOfDescriptors(const boost::system::error_code& ec);

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer pause_;
  DescriptorReserve reserve_;
  LogLimiter log_limiter_;
  const std::string what_;
  const std::string refusal_;
  std::atomic<int64_t>& refused_;
  std::function<size_t()> open_connections_;
  OnSocket on_socket_;
  uint16_t port_ = 0;
  bool stopped_ = false;
};

}  // namespace bulkhead
