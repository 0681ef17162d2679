// File descriptors as a budget: the process limit, raised once at start, and a reserve that lets
// a listener out of descriptors refuse waiting connections instead of leaving them in the backlog
// (where the next accept fails again at once, a hot loop).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct DescriptorLimit {
  uint64_t soft = 0;  // in force
  uint64_t hard = 0;
};

// Raises RLIMIT_NOFILE's soft limit to its hard limit (systemd's default soft limit is 1024 while
// the hard one is far higher) and returns the limits now in force. Unavailable names the OS error.
Result<DescriptorLimit> RaiseDescriptorLimit();

// True for the accept() errors that mean "no descriptor (or kernel memory) for a new socket":
// EMFILE, ENFILE, ENOBUFS, ENOMEM.
bool IsOutOfDescriptors(const boost::system::error_code& ec);

// One descriptor (/dev/null) held back for Shed().
// Threading: not thread-safe; the owning listener's thread.
class DescriptorReserve {
 public:
  DescriptorReserve();
  ~DescriptorReserve();
  DescriptorReserve(const DescriptorReserve&) = delete;
  DescriptorReserve& operator=(const DescriptorReserve&) = delete;

  // Gives up the reserve, accepts every connection waiting on `acceptor` without blocking, hands
  // each to `refuse` (which writes a short error; the socket is closed after it), and takes the
  // reserve back. Returns how many connections were refused.
  int Shed(boost::asio::ip::tcp::acceptor& acceptor,
           const std::function<void(boost::asio::ip::tcp::socket&)>& refuse);

  // Writes `bytes` to `socket` without blocking, best effort (the socket is about to close).
  static void WriteAndForget(boost::asio::ip::tcp::socket& socket, std::string_view bytes);

 private:
  int fd_ = -1;
};

}  // namespace bulkhead
