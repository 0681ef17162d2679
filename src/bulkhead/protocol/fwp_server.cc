#include "bulkhead/protocol/fwp_server.h"

#include <boost/asio/ip/address.hpp>
#include <spdlog/spdlog.h>

#include "bulkhead/protocol/session.h"
#include "bulkhead/util/tcp_listener.h"

namespace bulkhead {

namespace asio = boost::asio;
using asio::ip::tcp;

FwpServer::FwpServer(asio::io_context& io, Engine& engine, const Config& config, Rng& rng)
    : engine_(engine), config_(config), rng_(rng), acceptor_(io) {
  engine_.SetWorkerReapedHandler([this](const std::string& wid) { CloseWorker(wid); });
}

FwpServer::~FwpServer() { Stop(); }

Status FwpServer::Listen(const std::string& host, uint16_t port) {
  Status s = ListenTcp(acceptor_, host, port, "Faktory protocol");
  if (!s.ok()) return s;
  port_ = acceptor_.local_endpoint().port();
  DoAccept();
  return Status::Ok();
}

void FwpServer::DoAccept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || stopping_) return;
      // EMFILE and friends: log, keep accepting (after a short pause would be nicer; the next
      // accept will simply fail again until descriptors free up).
      spdlog::warn("accept failed: {}", ec.message());
      DoAccept();
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);
    bool over_limit = sessions_.size() >= static_cast<size_t>(config_.max_connections);
    uint64_t id = next_id_++;
    auto session = std::make_shared<Session>(std::move(socket), *this, id);
    sessions_[id] = session;
    session->Start(over_limit);
    DoAccept();
  });
}

void FwpServer::Stop() {
  if (stopping_) return;
  stopping_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  auto sessions = sessions_;
  for (auto& [id, weak] : sessions) {
    if (auto s = weak.lock()) s->Close();
  }
}

ServerCounters FwpServer::counters() const {
  return ServerCounters{static_cast<int64_t>(sessions_.size()), command_count_};
}

void FwpServer::OnSessionClosed(uint64_t id, const std::string& wid) {
  sessions_.erase(id);
  if (!wid.empty()) engine_.workers().Disconnect(wid);
}

void FwpServer::CloseWorker(const std::string& wid) {
  auto sessions = sessions_;
  for (auto& [id, weak] : sessions) {
    auto s = weak.lock();
    if (s && s->wid() == wid) s->Close();
  }
}

}  // namespace bulkhead
