// HttpServer: a small HTTP/1.1 server (Boost.Beast) on the event loop for health, the JSON API
// and metrics. Routes are exact paths or prefixes registered before Listen(); handlers answer
// asynchronously through the callback they are given.
//
// Limits: request bodies up to 1 MiB; idle keep-alive connections close after 60 s; at most
// max_connections at once: at the cap the connection that has waited longest for its next request
// (an idle keep-alive, or one that is slow to send its request) is closed to make room, and when
// every connection is busy the new one is answered 503. Out of file descriptors, its
// GuardedAcceptor answers waiting connections 503. Every response body is built from
// valid UTF-8 (DumpJson), whatever bytes the request held.
// Threading: event loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/util/descriptors.h"
#include "bulkhead/util/guard_counters.h"
#include "bulkhead/util/guarded_acceptor.h"
#include "bulkhead/util/log_limiter.h"
#include "bulkhead/util/status.h"
#include "bulkhead/util/tls_server_context.h"

namespace bulkhead {

struct HttpRequestIn {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string
  std::string query;   // after '?', undecoded
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

struct HttpResponseOut {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponseOut Json(int status, std::string body);
  // {"error": message}
  static HttpResponseOut Error(int status, const std::string& message);
  // An error reply for a failed Status: {"error": its message} with the HTTP status its code
  // means (400 bad input, 403, 404, 409 not now, 429 a limit, 503 a dependency down, else 500).
  static HttpResponseOut Error(const Status& status);
};

struct HttpServerOptions {
  int max_connections = 256;  // connections at once (see the limits above)
};

class HttpServer {
 public:
  using Reply = std::function<void(HttpResponseOut)>;
  using Handler = std::function<void(const HttpRequestIn&, Reply)>;

  using Options = HttpServerOptions;
  explicit HttpServer(boost::asio::io_context& io, Options options = {},
                      const Clock& clock = SystemClock::Instance());
  ~HttpServer();

  // `path` is matched exactly; a path ending in '/' also matches everything below it
  // (the longest match wins). `method` "*" matches any method.
  void Route(const std::string& method, const std::string& path, Handler handler);

  // Serve HTTPS only, with `tls`'s current certificate for each new connection (call before
  // Listen; `tls` outlives the server). nullptr: plain HTTP.
  void SetTls(const TlsServerContext* tls) { tls_ = tls; }

  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return acceptor_.port(); }
  void Stop();

  const GuardCounters& guards() const { return guards_; }
  size_t connections() const { return connections_.size(); }

 public:
  // Internal: the connections' view of the server.
  class Connection;
  void Forget(uint64_t id) { connections_.erase(id); }
  void NoteTlsHandshakeFailure(const boost::system::error_code& ec);
  // Runs the handler of the route that matches `req` (404/405 when none).
  void Dispatch(const HttpRequestIn& req, Reply reply);

 private:
  void OnAccepted(boost::asio::ip::tcp::socket socket);
  // At the cap: closes the connection waiting longest for a request; false when none waits.
  bool EvictLongestWaiting();

  boost::asio::io_context& io_;
  const Options options_;
  GuardCounters guards_;  // before acceptor_, which counts into it
  GuardedAcceptor acceptor_;
  LogLimiter log_limiter_;
  const TlsServerContext* tls_ = nullptr;
  bool stopping_ = false;
  struct RouteEntry {
    std::string method;
    std::string path;
    Handler handler;
  };
  std::vector<RouteEntry> routes_;
  std::map<uint64_t, std::weak_ptr<Connection>> connections_;
  uint64_t next_id_ = 1;
};

}  // namespace bulkhead
