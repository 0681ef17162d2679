#include "bulkhead/util/guarded_acceptor.h"

#include <spdlog/spdlog.h>

#include "bulkhead/util/tcp_listener.h"

namespace bulkhead {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// How long accepting pauses after running out of descriptors.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

}  // namespace

GuardedAcceptor::GuardedAcceptor(asio::io_context& io, const Clock& clock, std::string what,
                                 std::string refusal, std::atomic<int64_t>& refused,
                                 std::function<size_t()> open_connections)
    : acceptor_(io),
      pause_(io),
      log_limiter_(clock),
      what_(std::move(what)),
      refusal_(std::move(refusal)),
      refused_(refused),
      open_connections_(std::move(open_connections)) {}

Status GuardedAcceptor::Listen(const std::string& host, uint16_t port, OnSocket on_socket) {
  Status s = ListenTcp(acceptor_, host, port, what_);
  if (!s.ok()) return s;
  port_ = acceptor_.local_endpoint().port();
  on_socket_ = std::move(on_socket);
  DoAccept();
  return Status::Ok();
}

void GuardedAcceptor::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  pause_.cancel();
}

void GuardedAcceptor::DoAccept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || stopped_) return;
      if (IsOutOfDescriptors(ec)) {
        OnOutOfDescriptors(ec);
        return;
      }
      if (auto dropped = log_limiter_.Admit("accept")) {
        spdlog::warn("{}: accept failed: {}{}", what_, ec.message(),
                     LogLimiter::SuppressedNote(*dropped));
      }
      DoAccept();
      return;
    }
    on_socket_(std::move(socket));
    if (!stopped_) DoAccept();
  });
}

void GuardedAcceptor::OnOutOfDescriptors(const boost::system::error_code& ec) {
  int refused = reserve_.Shed(acceptor_, [this](tcp::socket& socket) {
    DescriptorReserve::WriteAndForget(socket, refusal_);
  });
  refused_.fetch_add(refused, std::memory_order_relaxed);
  if (auto dropped = log_limiter_.Admit("descriptors")) {
    spdlog::error(
        "{}: accept failed: {} ({} connections open); refused {} waiting connection(s), accepting "
        "again in {} ms; raise LimitNOFILE / ulimit -n or lower the connection caps{}",
        what_, ec.message(), open_connections_(), refused, kAcceptPause.count(),
        LogLimiter::SuppressedNote(*dropped));
  }
  pause_.expires_after(kAcceptPause);
  pause_.async_wait([this](boost::system::error_code wait_ec) {
    if (wait_ec || stopped_) return;
    DoAccept();
  });
}

}  // namespace bulkhead
