// HttpServer: a small HTTP/1.1 server (Boost.Beast) on the event loop for health, the JSON API
// and metrics. Routes are exact paths or prefixes registered before Listen(); handlers answer
// asynchronously through the callback they are given.
//
// Limits: request bodies up to 1 MiB; idle keep-alive connections close after 60 s.
// Threading: event loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/util/status.h"

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
};

class HttpServer {
 public:
  using Reply = std::function<void(HttpResponseOut)>;
  using Handler = std::function<void(const HttpRequestIn&, Reply)>;

  explicit HttpServer(boost::asio::io_context& io);
  ~HttpServer();

  // `path` is matched exactly; a path ending in '/' also matches everything below it
  // (the longest match wins). `method` "*" matches any method.
  void Route(const std::string& method, const std::string& path, Handler handler);

  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return port_; }
  void Stop();

 private:
  class Connection;
  void DoAccept();
  void Dispatch(const HttpRequestIn& req, Reply reply);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
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
