#include "bulkhead/replay/push_endpoint.h"

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <set>
#include <thread>

namespace bulkhead {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class PushEndpoint::Impl {
 public:
  explicit Impl(const PushEndpointOptions& options) : options_(options), acceptor_(io_) {}

  ~Impl() {
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      for (const auto& s : sessions_) s->Close();
      sessions_.clear();
      io_.stop();
    });
    if (thread_.joinable()) thread_.join();
  }

  Status Listen() {
    boost::system::error_code ec;
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (ec) return Status::Unavailable("push endpoint: cannot bind 127.0.0.1: " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    if (options_.fault == Fault::kRefuse) {
      acceptor_.close(ec);  // bound and released: nothing listens on port_
    } else {
      acceptor_.listen(asio::socket_base::max_listen_connections, ec);
      if (ec) return Status::Unavailable("push endpoint: listen: " + ec.message());
      Accept();
    }
    thread_ = std::thread([this] {
      auto guard = asio::make_work_guard(io_);
      io_.run();
    });
    return Status::Ok();
  }

  uint16_t port() const { return port_; }
  Fault fault() const { return options_.fault; }
  int64_t connections() const { return connections_.load(); }

  std::vector<PushArrival> Arrivals() const {
    std::lock_guard lock(mu_);
    return arrivals_;
  }

 private:
  // One connection: read a request, answer as the fault says, repeat while kept alive.
  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(Impl& owner, tcp::socket socket)
        : owner_(owner), socket_(std::move(socket)), timer_(socket_.get_executor()) {}

    void Read() {
      request_ = {};
      http::async_read(socket_, buffer_, request_,
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         if (ec) return self->Done();
                         self->OnRequest();
                       });
    }

    void Close() {
      boost::system::error_code ec;
      timer_.cancel();
      socket_.close(ec);
    }

   private:
    void OnRequest() {
      owner_.Record(std::string(request_.target()));
      const auto& o = owner_.options_;
      switch (o.fault) {
        case Fault::kNone:
          return Answer(http::status::created);
        case Fault::k5xx:
          return Answer(http::status::internal_server_error);
        case Fault::k429:
          return Answer(http::status::too_many_requests);
        case Fault::kBlackhole:
        case Fault::kRefuse:
          return WaitForClose();  // never answer
        case Fault::kReset: {
          boost::system::error_code ec;
          socket_.set_option(asio::socket_base::linger(true, 0), ec);
          socket_.close(ec);
          return Done();
        }
        case Fault::kLate:
          timer_.expires_after(o.late_delay);
          timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->Answer(http::status::created);
          });
          return;
        case Fault::kSlowDrip:
          head_ = "HTTP/1.1 201 Created\r\nContent-Length: 100000\r\n\r\n";
          asio::async_write(socket_, asio::buffer(head_),
                            [self = shared_from_this()](boost::system::error_code ec, size_t) {
                              if (ec) return self->Done();
                              self->Drip();
                            });
          return;
      }
    }

    // Holds the connection without answering until the client gives up and closes it.
    void WaitForClose() {
      socket_.async_read_some(asio::buffer(sink_),
                              [self = shared_from_this()](boost::system::error_code ec, size_t) {
                                if (ec) return self->Done();
                                self->WaitForClose();
                              });
    }

    void Drip() {
      timer_.expires_after(owner_.options_.drip_interval);
      timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec) return;
        asio::async_write(self->socket_, asio::buffer("x", 1),
                          [self](boost::system::error_code ec, size_t) {
                            if (ec) return self->Done();
                            self->Drip();
                          });
      });
    }

    void Answer(http::status status) {
      response_ = {};
      response_.version(request_.version());
      response_.result(status);
      response_.keep_alive(request_.keep_alive());
      if (status == http::status::too_many_requests) {
        response_.set(http::field::retry_after,
                      std::to_string(owner_.options_.retry_after_seconds));
      }
      response_.prepare_payload();
      http::async_write(socket_, response_,
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          if (ec || !self->response_.keep_alive()) return self->Done();
                          self->Read();
                        });
    }

    void Done() {
      Close();
      owner_.sessions_.erase(shared_from_this());
    }

    Impl& owner_;
    tcp::socket socket_;
    asio::steady_timer timer_;
    beast::flat_buffer buffer_;
    http::request<http::string_body> request_;
    http::response<http::empty_body> response_;
    std::string head_;
    std::array<char, 512> sink_;
  };

  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == asio::error::operation_aborted) return;
      } else {
        connections_.fetch_add(1);
        auto session = std::make_shared<Session>(*this, std::move(socket));
        sessions_.insert(session);
        session->Read();
      }
      Accept();
    });
  }

  void Record(std::string target) {
    int64_t now = SteadyMicros();
    std::lock_guard lock(mu_);
    arrivals_.push_back({now, std::move(target)});
  }

  const PushEndpointOptions options_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::atomic<int64_t> connections_{0};
  std::set<std::shared_ptr<Session>> sessions_;  // io thread only
  mutable std::mutex mu_;
  std::vector<PushArrival> arrivals_;  // guarded by mu_
};

Result<std::unique_ptr<PushEndpoint>> PushEndpoint::Start(const PushEndpointOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  Status s = impl->Listen();
  if (!s.ok()) return s;
  return std::unique_ptr<PushEndpoint>(new PushEndpoint(std::move(impl)));
}

PushEndpoint::PushEndpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PushEndpoint::~PushEndpoint() = default;
uint16_t PushEndpoint::port() const { return impl_->port(); }
Fault PushEndpoint::fault() const { return impl_->fault(); }
std::vector<PushArrival> PushEndpoint::Arrivals() const { return impl_->Arrivals(); }
int64_t PushEndpoint::connections() const { return impl_->connections(); }

}  // namespace bulkhead
