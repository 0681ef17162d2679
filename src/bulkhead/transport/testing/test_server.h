// Test-only: a small HTTP/1.1 server on 127.0.0.1 (port chosen by the OS) whose behaviour is chosen
// by the request path, so one server can play a healthy host, a host that never answers, one that
// drips, one that resets. Plain or TLS. Runs on its own thread with its own io_context; the
// destructor stops it and closes every connection. Header-only; used by transport tests and the
// transport benchmark, never by the library.
//
// Paths:
//   /ok              200 "hello" (keep-alive)
//   /echo            200, body "<METHOD> <request body>", echoes X-Test as X-Echo
//   /status/NNN      status NNN; 429 and 503 carry "Retry-After: 7"
//   /never           reads the request, never answers
//   /slow            answers 200 after Options::delay
//   /drip            sends headers (Content-Length 100000), then one body byte per drip_interval
//   /reset           reads the request, then resets the connection (RST, SO_LINGER 0)
//   /close           reads the request, then closes without answering
//   /big             200 with a 300 KiB body
//   /redirect        302 to Options::redirect_location (default "/ok")
// With Options::hold_without_reading, connections are accepted and held without reading a byte
// (with TLS: the handshake never completes).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "bulkhead/util/ascii.h"

namespace bulkhead::testing {

class TestServer {
 public:
  struct Options {
    bool tls = false;
    std::string cert_pem = {};
    std::string key_pem = {};
    bool hold_without_reading = false;
    std::chrono::milliseconds delay{5000};
    std::chrono::milliseconds drip_interval{100};
    std::string redirect_location = "/ok";
    int backlog = 4096;
  };

  explicit TestServer(Options options)
      : options_(std::move(options)), ssl_(boost::asio::ssl::context::tls_server), acceptor_(io_) {
    using boost::asio::ip::tcp;
    if (options_.tls) {
      ssl_.use_certificate_chain(boost::asio::buffer(options_.cert_pem));
      ssl_.use_private_key(boost::asio::buffer(options_.key_pem), boost::asio::ssl::context::pem);
    }
    tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(ep.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen(options_.backlog);
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }

  ~TestServer() {
    boost::asio::post(io_, [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& s : sessions_) s->Close();
      sessions_.clear();
    });
    io_.stop();
    thread_.join();
  }

  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  uint16_t port() const { return port_; }
  std::string Url(const std::string& path) const {
    return std::string(options_.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
           path;
  }
  // Connections accepted and requests read so far.
  int accepted() const { return accepted_.load(); }
  int requests() const { return requests_.load(); }
  // TLS handshakes completed, and how many of them resumed an earlier session (abbreviated
  // handshake: SSL_session_reused).
  int handshakes() const { return handshakes_.load(); }
  int resumed() const { return resumed_.load(); }

 private:
  using tcp = boost::asio::ip::tcp;

  struct SessionBase {
    virtual ~SessionBase() = default;
    virtual void Close() = 0;
  };

  template <typename Stream>
  class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
   public:
    Session(TestServer* server, Stream stream)
        : server_(server), stream_(std::move(stream)), timer_(server->io_) {}

    void Start() {
      if constexpr (std::is_same_v<Stream, tcp::socket>) {
        ReadRequest();
      } else {
        auto self = this->shared_from_this();
        stream_.async_handshake(boost::asio::ssl::stream_base::server,
                                [self](const boost::system::error_code& ec) {
                                  if (ec) return;
                                  ++self->server_->handshakes_;
                                  if (SSL_session_reused(self->stream_.native_handle()) == 1) {
                                    ++self->server_->resumed_;
                                  }
                                  self->ReadRequest();
                                });
      }
    }

    void Close() override {
      boost::system::error_code ignored;
      timer_.cancel();
      Socket().close(ignored);
    }

   private:
    tcp::socket& Socket() {
      if constexpr (std::is_same_v<Stream, tcp::socket>) {
        return stream_;
      } else {
        return stream_.next_layer();
      }
    }

    void ReadRequest() {
      auto self = this->shared_from_this();
      boost::asio::async_read_until(
          stream_, in_, "\r\n\r\n", [self](const boost::system::error_code& ec, size_t n) {
            if (ec) return;
            std::string head(boost::asio::buffers_begin(self->in_.data()),
                             boost::asio::buffers_begin(self->in_.data()) + n);
            self->in_.consume(n);
            self->OnHead(std::move(head));
          });
    }

    void OnHead(std::string head) {
      size_t sp1 = head.find(' ');
      size_t sp2 = head.find(' ', sp1 + 1);
      method_ = head.substr(0, sp1);
      path_ = head.substr(sp1 + 1, sp2 - sp1 - 1);
      echo_.clear();
      size_t content_length = 0;
      const std::string lower = AsciiLower(head);
      if (size_t p = lower.find("\r\ncontent-length:"); p != std::string::npos) {
        content_length = std::stoul(head.substr(p + 17));
      }
      if (size_t p = lower.find("\r\nx-test:"); p != std::string::npos) {
        size_t end = head.find("\r\n", p + 2);
        echo_ = head.substr(p + 9, end - p - 9);
        while (!echo_.empty() && echo_.front() == ' ') echo_.erase(0, 1);
      }
      size_t have = in_.size();
      auto self = this->shared_from_this();
      if (content_length > have) {
        boost::asio::async_read(
            stream_, in_, boost::asio::transfer_exactly(content_length - have),
            [self, content_length](const boost::system::error_code& ec, size_t) {
              if (ec) return;
              self->TakeBody(content_length);
            });
      } else {
        TakeBody(content_length);
      }
    }

    void TakeBody(size_t n) {
      body_.assign(boost::asio::buffers_begin(in_.data()),
                   boost::asio::buffers_begin(in_.data()) + n);
      in_.consume(n);
      server_->requests_.fetch_add(1);
      Behave();
    }

    void Behave() {
      auto self = this->shared_from_this();
      const Options& o = server_->options_;
      if (path_ == "/ok") {
        Respond(200, "", "hello");
      } else if (path_ == "/echo") {
        Respond(200, echo_.empty() ? "" : "X-Echo: " + echo_ + "\r\n", method_ + " " + body_);
      } else if (path_.rfind("/status/", 0) == 0) {
        int status = std::stoi(path_.substr(8));
        std::string extra = (status == 429 || status == 503) ? "Retry-After: 7\r\n" : "";
        Respond(status, extra, "status " + std::to_string(status));
      } else if (path_ == "/never") {
        // Hold: the session stays in the server's set until shutdown.
      } else if (path_ == "/slow") {
        timer_.expires_after(o.delay);
        timer_.async_wait([self](const boost::system::error_code& ec) {
          if (!ec) self->Respond(200, "", "slow");
        });
      } else if (path_ == "/drip") {
        out_ = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
        boost::asio::async_write(stream_, boost::asio::buffer(out_),
                                 [self](const boost::system::error_code& ec, size_t) {
                                   if (!ec) self->Drip();
                                 });
      } else if (path_ == "/reset") {
        Socket().set_option(boost::asio::socket_base::linger(true, 0));
        boost::system::error_code ignored;
        Socket().close(ignored);
      } else if (path_ == "/close") {
        boost::system::error_code ignored;
        Socket().shutdown(tcp::socket::shutdown_both, ignored);
        Socket().close(ignored);
      } else if (path_ == "/big") {
        Respond(200, "", std::string(300 * 1024, 'b'));
      } else if (path_ == "/redirect") {
        Respond(302, "Location: " + o.redirect_location + "\r\n", "moved");
      } else {
        Respond(404, "", "not found");
      }
    }

    void Drip() {
      auto self = this->shared_from_this();
      timer_.expires_after(server_->options_.drip_interval);
      timer_.async_wait([self](const boost::system::error_code& ec) {
        if (ec) return;
        boost::asio::async_write(self->stream_, boost::asio::buffer("d", 1),
                                 [self](const boost::system::error_code& ec, size_t) {
                                   if (!ec) self->Drip();
                                 });
      });
    }

    void Respond(int status, const std::string& extra_headers, const std::string& body) {
      out_ = "HTTP/1.1 " + std::to_string(status) +
             " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers +
             "\r\n" + body;
      auto self = this->shared_from_this();
      boost::asio::async_write(stream_, boost::asio::buffer(out_),
                               [self](const boost::system::error_code& ec, size_t) {
                                 if (!ec) self->ReadRequest();  // keep-alive
                               });
    }

    TestServer* server_;
    Stream stream_;
    boost::asio::steady_timer timer_;
    boost::asio::streambuf in_;
    std::string method_, path_, body_, echo_, out_;
  };

  struct HeldSocket : SessionBase {
    explicit HeldSocket(tcp::socket s) : socket(std::move(s)) {}
    void Close() override {
      boost::system::error_code ignored;
      socket.close(ignored);
    }
    tcp::socket socket;
  };

  void Accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec) return;
      accepted_.fetch_add(1);
      std::shared_ptr<SessionBase> session;
      if (options_.hold_without_reading) {
        session = std::make_shared<HeldSocket>(std::move(socket));
      } else if (options_.tls) {
        auto s = std::make_shared<Session<boost::asio::ssl::stream<tcp::socket>>>(
            this, boost::asio::ssl::stream<tcp::socket>(std::move(socket), ssl_));
        s->Start();
        session = s;
      } else {
        auto s = std::make_shared<Session<tcp::socket>>(this, std::move(socket));
        s->Start();
        session = s;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        sessions_.insert(std::move(session));
      }
      Accept();
    });
  }

  const Options options_;
  boost::asio::io_context io_;
  boost::asio::ssl::context ssl_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<int> requests_{0};
  std::atomic<int> handshakes_{0};
  std::atomic<int> resumed_{0};
  std::mutex mu_;
  std::set<std::shared_ptr<SessionBase>> sessions_;  // guarded by mu_; closed at shutdown
  std::thread thread_;
};

}  // namespace bulkhead::testing
