// Opening a listening TCP socket the same way for every server in bulkhead (FWP, HTTP).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

// Opens, binds (SO_REUSEADDR) and listens `acceptor` on host:port ("localhost" means 127.0.0.1;
// port 0 picks a free port). InvalidArgument for a host that is not an IP address, Unavailable
// (naming `what`, the address and the OS error) when binding fails.
Status ListenTcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host, uint16_t port,
                 const std::string& what);

}  // namespace bulkhead
