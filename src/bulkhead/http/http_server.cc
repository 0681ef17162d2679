#include "bulkhead/http/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/util/ascii.h"
#include "bulkhead/util/json.h"

namespace bulkhead {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

HttpResponseOut HttpResponseOut::Json(int status, std::string body) {
  HttpResponseOut r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponseOut HttpResponseOut::Error(int status, const std::string& message) {
  return Json(status, DumpJson(nlohmann::json{{"error", message}}));
}

HttpResponseOut HttpResponseOut::Error(const Status& status) {
  int http = 500;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      http = 400;
      break;
    case StatusCode::kPermissionDenied:
      http = 403;
      break;
    case StatusCode::kNotFound:
      http = 404;
      break;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      http = 409;
      break;
    case StatusCode::kResourceExhausted:
      http = 429;
      break;
    case StatusCode::kUnavailable:
      http = 503;
      break;
    default:
      break;
  }
  return Error(http, status.message());
}

namespace {

std::string CannedError(int status, const char* reason, const std::string& message) {
  std::string body = DumpJson(nlohmann::json{{"error", message}});
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

// One HTTP connection, whatever its stream; the server keeps them by this base.
class HttpServer::Connection {
 public:
  virtual ~Connection() = default;
  virtual void Start() = 0;
  virtual void Close() = 0;
  // Waiting for (the rest of) a request, not running a handler or writing; since when.
  bool waiting() const { return waiting_; }
  std::chrono::steady_clock::time_point waiting_since() const { return waiting_since_; }

 protected:
  bool waiting_ = false;
  std::chrono::steady_clock::time_point waiting_since_;
};

namespace {

// The parts of a plain and a TLS stream that StreamConnection needs.
beast::tcp_stream& Lowest(beast::tcp_stream& s) { return s; }
beast::tcp_stream& Lowest(beast::ssl_stream<beast::tcp_stream>& s) { return s.next_layer(); }

}  // namespace

// Stream: beast::tcp_stream (HTTP) or beast::ssl_stream<beast::tcp_stream> (HTTPS).
template <typename Stream>
class StreamConnection final : public HttpServer::Connection,
                               public std::enable_shared_from_this<StreamConnection<Stream>> {
 public:
  template <typename... StreamArgs>
  StreamConnection(HttpServer& server, uint64_t id, StreamArgs&&... args)
      : stream_(std::forward<StreamArgs>(args)...), server_(server), id_(id) {}

  void Start() override {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      DoRead();
    } else {
      // The handshake shares the first request's deadline.
      Lowest(stream_).expires_after(std::chrono::seconds(60));
      waiting_ = true;
      waiting_since_ = std::chrono::steady_clock::now();
      auto self = this->shared_from_this();
      stream_.async_handshake(asio::ssl::stream_base::server, [this, self](beast::error_code ec) {
        waiting_ = false;
        if (ec) {
          // Closed before sending anything (a TCP health check): not a failed handshake.
          if (ec != asio::ssl::error::stream_truncated && ec != asio::error::eof) {
            server_.NoteTlsHandshakeFailure(ec);
          }
          Close();
          Finish();
          return;
        }
        DoRead();
      });
    }
  }

  void Close() override {
    beast::error_code ec;
    Lowest(stream_).socket().shutdown(tcp::socket::shutdown_both, ec);
    Lowest(stream_).close();
  }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(1024 * 1024);
    Lowest(stream_).expires_after(std::chrono::seconds(60));
    waiting_ = true;
    waiting_since_ = std::chrono::steady_clock::now();
    auto self = this->shared_from_this();
    http::async_read(stream_, buffer_, *parser_, [this, self](beast::error_code ec, size_t) {
      waiting_ = false;
      if (ec) {
        if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
            ec != asio::error::operation_aborted && ec != asio::error::connection_reset &&
            ec != asio::ssl::error::stream_truncated) {
          HttpResponseOut r = HttpResponseOut::Error(400, "bad request: " + ec.message());
          Write(std::move(r), false);
          return;
        }
        Finish();
        return;
      }
      auto& msg = parser_->get();
      HttpRequestIn req;
      req.method = std::string(msg.method_string());
      std::string target(msg.target());
      auto q = target.find('?');
      req.path = target.substr(0, q);
      if (q != std::string::npos) req.query = target.substr(q + 1);
      req.body = msg.body();
      for (const auto& field : msg) {
        auto name = field.name_string();
        req.headers[AsciiLower({name.data(), name.size()})] = std::string(field.value());
      }
      bool keep_alive = msg.keep_alive();
      server_.Dispatch(
          req, [self, keep_alive](HttpResponseOut r) { self->Write(std::move(r), keep_alive); });
    });
  }

  void Write(HttpResponseOut r, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<http::status>(r.status));
    res->set(http::field::server, "bulkhead/" BULKHEAD_VERSION);
    res->set(http::field::content_type, r.content_type);
    res->set(http::field::cache_control, "no-store");
    for (auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    auto self = this->shared_from_this();
    http::async_write(stream_, *res, [this, self, res, keep_alive](beast::error_code ec, size_t) {
      if (ec || !keep_alive) {
        Close();
        Finish();
        return;
      }
      DoRead();
    });
  }

  void Finish() { server_.Forget(id_); }

  Stream stream_;
  HttpServer& server_;
  uint64_t id_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

HttpServer::HttpServer(asio::io_context& io, Options options, const Clock& clock)
    : io_(io),
      options_(options),
      acceptor_(io, clock, "HTTP",
                CannedError(503, "Service Unavailable",
                            "server out of file descriptors: try again later"),
                guards_.http_fd_limit, [this] { return connections_.size(); }),
      log_limiter_(clock) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(const std::string& method, const std::string& path, Handler handler) {
  routes_.push_back(RouteEntry{method, path, std::move(handler)});
}

Status HttpServer::Listen(const std::string& host, uint16_t port) {
  return acceptor_.Listen(host, port,
                          [this](tcp::socket socket) { OnAccepted(std::move(socket)); });
}

void HttpServer::OnAccepted(tcp::socket socket) {
  if (connections_.size() >= static_cast<size_t>(options_.max_connections) &&
      !EvictLongestWaiting()) {
    GuardCounters::Bump(guards_.http_max_connections);
    if (auto dropped = log_limiter_.Admit("max_connections")) {
      spdlog::warn("HTTP: {} connections open, all busy (http_max_connections): answered 503{}",
                   connections_.size(), LogLimiter::SuppressedNote(*dropped));
    }
    DescriptorReserve::WriteAndForget(socket,
                                      CannedError(503, "Service Unavailable",
                                                  "too many HTTP connections: limit is " +
                                                      std::to_string(options_.max_connections)));
    boost::system::error_code ec;
    socket.close(ec);
    return;
  }
  uint64_t id = next_id_++;
  std::shared_ptr<Connection> conn;
  if (tls_ != nullptr) {
    conn = std::make_shared<StreamConnection<beast::ssl_stream<beast::tcp_stream>>>(
        *this, id, std::move(socket), *tls_->current());
  } else {
    conn = std::make_shared<StreamConnection<beast::tcp_stream>>(*this, id, std::move(socket));
  }
  connections_[id] = conn;
  conn->Start();
}

bool HttpServer::EvictLongestWaiting() {
  std::shared_ptr<Connection> oldest;
  uint64_t oldest_id = 0;
  for (auto& [id, weak] : connections_) {
    auto c = weak.lock();
    if (!c || !c->waiting()) continue;
    if (!oldest || c->waiting_since() < oldest->waiting_since()) {
      oldest = c;
      oldest_id = id;
    }
  }
  if (!oldest) return false;
  GuardCounters::Bump(guards_.http_idle_evicted);
  oldest->Close();
  connections_.erase(oldest_id);  // its read handler runs later, and finds itself gone
  return true;
}

void HttpServer::NoteTlsHandshakeFailure(const boost::system::error_code& ec) {
  GuardCounters::Bump(guards_.tls_handshake_failures);
  if (auto dropped = log_limiter_.Admit("tls-handshake")) {
    spdlog::warn("HTTP: TLS handshake failed: {} (clients must use https://){}", ec.message(),
                 LogLimiter::SuppressedNote(*dropped));
  }
}

void HttpServer::Dispatch(const HttpRequestIn& req, Reply reply) {
  const RouteEntry* best = nullptr;
  bool path_matched = false;
  for (const auto& r : routes_) {
    bool match = r.path == req.path ||
                 (r.path.size() > 1 && r.path.back() == '/' && req.path.rfind(r.path, 0) == 0);
    if (!match) continue;
    path_matched = true;
    if (r.method != "*" && r.method != req.method) continue;
    if (!best || r.path.size() > best->path.size()) best = &r;
  }
  if (!best) {
    reply(path_matched
              ? HttpResponseOut::Error(405, "method " + req.method + " not allowed on " + req.path)
              : HttpResponseOut::Error(404, "no such path: " + req.path));
    return;
  }
  best->handler(req, std::move(reply));
}

void HttpServer::Stop() {
  if (stopping_) return;
  stopping_ = true;
  acceptor_.Stop();
  auto conns = connections_;
  for (auto& [id, weak] : conns) {
    if (auto c = weak.lock()) c->Close();
  }
}

}  // namespace bulkhead
