// FwpStream: the byte stream under one FWP session, plain TCP or TLS over TCP, behind one small
// interface so that Session does not care which. A TLS stream must complete AsyncHandshake before
// any read or write; a plain one completes it at once.
//
// Lifetime: the TLS context is shared with the stream, so a certificate reload never pulls it
// from under an established connection.
// Threading: event loop thread only.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <optional>

namespace bulkhead {

class FwpStream {
 public:
  using Socket = boost::asio::ip::tcp::socket;

  explicit FwpStream(Socket socket) : plain_(std::move(socket)) {}
  FwpStream(Socket socket, std::shared_ptr<boost::asio::ssl::context> context)
      : context_(std::move(context)),
        tls_(std::make_unique<boost::asio::ssl::stream<Socket>>(std::move(socket), *context_)) {}

  bool tls() const { return tls_ != nullptr; }
  Socket& socket() { return tls_ ? tls_->next_layer() : *plain_; }

  // handler(error_code): the server side of the TLS handshake; plain streams succeed at once.
  template <typename Handler>
  void AsyncHandshake(Handler&& handler) {
    if (!tls_) {
      boost::asio::post(socket().get_executor(), [h = std::forward<Handler>(handler)]() mutable {
        h(boost::system::error_code());
      });
      return;
    }
    tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
  }

  // handler(error_code, size_t)
  template <typename Buffer, typename Handler>
  void AsyncReadSome(const Buffer& buffer, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffer, std::forward<Handler>(handler));
    } else {
      plain_->async_read_some(buffer, std::forward<Handler>(handler));
    }
  }

  // Writes all of `buffer`; handler(error_code, size_t).
  template <typename Buffer, typename Handler>
  void AsyncWrite(const Buffer& buffer, Handler&& handler) {
    if (tls_) {
      boost::asio::async_write(*tls_, buffer, std::forward<Handler>(handler));
    } else {
      boost::asio::async_write(*plain_, buffer, std::forward<Handler>(handler));
    }
  }

  // Closes the TCP connection (no TLS close_notify: the peer sees the TCP close, as after END).
  void Close() {
    boost::system::error_code ec;
    socket().shutdown(Socket::shutdown_both, ec);
    socket().close(ec);
  }

 private:
  std::optional<Socket> plain_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::unique_ptr<boost::asio::ssl::stream<Socket>> tls_;
};

}  // namespace bulkhead
