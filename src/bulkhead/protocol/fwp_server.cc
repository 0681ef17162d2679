#include "bulkhead/protocol/fwp_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/address.hpp>

#include "bulkhead/protocol/replies.h"
#include "bulkhead/protocol/session.h"

namespace bulkhead {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

LoginThrottle::Options ThrottleOptions(const Config& config) {
  LoginThrottle::Options o;
  o.base_delay = std::chrono::milliseconds(config.login_failure_delay_ms);
  return o;
}

}  // namespace

FwpServer::FwpServer(asio::io_context& io, Engine& engine, const Config& config, Rng& rng)
    : io_(io),
      engine_(engine),
      config_(config),
      rng_(rng),
      acceptor_(io, engine.clock(), "Faktory protocol",
                "-ERR " + std::string(replies::kOutOfDescriptors) + "\r\n", guards_.fwp_fd_limit,
                [this] { return sessions_.size(); }),
      login_throttle_(engine.clock(), ThrottleOptions(config)),
      log_limiter_(engine.clock()) {
  engine_.SetWorkerReapedHandler([this](const std::string& wid) { CloseWorker(wid); });
}

FwpServer::~FwpServer() { Stop(); }

Status FwpServer::Listen(const std::string& host, uint16_t port) {
  return acceptor_.Listen(host, port,
                          [this](tcp::socket socket) { OnAccepted(std::move(socket)); });
}

void FwpServer::OnAccepted(tcp::socket socket) {
  boost::system::error_code ec;
  if (sessions_.size() >= static_cast<size_t>(config_.max_connections) + kOverflowConnections) {
    // Far past the cap: refuse at once rather than hold a descriptor for the handshake.
    GuardCounters::Bump(guards_.fwp_max_connections);
    DescriptorReserve::WriteAndForget(socket, "-ERR " + std::string(replies::kTooManyConnections) +
                                                  std::to_string(config_.max_connections) + "\r\n");
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  bool over_limit = sessions_.size() >= static_cast<size_t>(config_.max_connections);
  uint64_t id = next_id_++;
  auto session = std::make_shared<Session>(
      tls_ ? FwpStream(std::move(socket), tls_->current()) : FwpStream(std::move(socket)), *this,
      id);
  sessions_[id] = session;
  session->Start(over_limit);
}

void FwpServer::Stop() {
  if (stopping_) return;
  stopping_ = true;
  acceptor_.Stop();
  auto sessions = sessions_;
  for (auto& [id, weak] : sessions) {
    if (auto s = weak.lock()) s->Close();
  }
}

void FwpServer::NoteTlsHandshakeFailure(const std::string& peer, const std::string& reason) {
  GuardCounters::Bump(guards_.tls_handshake_failures);
  if (auto dropped = log_limiter_.Admit("tls-handshake:" + peer)) {
    bool plain = reason.find("wrong version number") != std::string::npos ||
                 reason.find("http request") != std::string::npos ||
                 reason.find("unknown protocol") != std::string::npos ||
                 reason.find("packet length too long") != std::string::npos ||
                 reason.find("no TLS handshake within") != std::string::npos;
    spdlog::warn("Faktory protocol: TLS handshake from {} failed: {}{}{}", peer, reason,
                 plain ? " (a plain-TCP client on the TLS port? clients must use tcp+tls://)" : "",
                 LogLimiter::SuppressedNote(*dropped));
  }
}

ServerCounters FwpServer::counters() const {
  return ServerCounters{static_cast<int64_t>(sessions_.size()), command_count_};
}

void FwpServer::Info(InfoCallback cb) {
  if (!info_source_) {
    cb(Status::Unavailable("INFO is not available"));
    return;
  }
  info_source_(std::move(cb));
}

void FwpServer::OnSessionClosed(uint64_t id, const std::string& wid) {
  sessions_.erase(id);
  if (!wid.empty()) engine_.workers().Disconnect(wid);
}

void FwpServer::CloseWorker(const std::string& wid) {
  auto sessions = sessions_;
  for (auto& [id, weak] : sessions) {
    auto s = weak.lock();
    if (s && s->wid() == wid) s->CloseAfterReplies();
  }
}

}  // namespace bulkhead
