#include "bulkhead/util/tcp_listener.h"

#include <boost/asio/ip/address.hpp>

namespace bulkhead {

namespace asio = boost::asio;

Status ListenTcp(asio::ip::tcp::acceptor& acceptor, const std::string& host, uint16_t port,
                 const std::string& what) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) {
    return Status::InvalidArgument("cannot listen (" + what + ") on \"" + host +
                                   "\": not an IP address");
  }
  asio::ip::tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("cannot listen (" + what + ") on " + host + ":" +
                               std::to_string(port) + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace bulkhead
