#include "bulkhead/util/descriptors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>

namespace bulkhead {

namespace asio = boost::asio;

Result<DescriptorLimit> RaiseDescriptorLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return Status::Unavailable(std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
    // On failure the old soft limit stays in force, and the caller checks its budget against it.
  }
  return DescriptorLimit{static_cast<uint64_t>(lim.rlim_cur), static_cast<uint64_t>(lim.rlim_max)};
}

bool IsOutOfDescriptors(const boost::system::error_code& ec) {
  if (ec.category() != boost::system::system_category()) return false;
  int v = ec.value();
  return v == EMFILE || v == ENFILE || v == ENOBUFS || v == ENOMEM;
}

DescriptorReserve::DescriptorReserve() { fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

DescriptorReserve::~DescriptorReserve() {
  if (fd_ >= 0) ::close(fd_);
}

int DescriptorReserve::Shed(asio::ip::tcp::acceptor& acceptor,
                            const std::function<void(asio::ip::tcp::socket&)>& refuse) {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  boost::system::error_code ec;
  acceptor.non_blocking(true, ec);
  int refused = 0;
  // Bounded: the backlog drains, and each round frees the descriptor it used.
  for (int i = 0; i < 4096; ++i) {
    asio::ip::tcp::socket socket(acceptor.get_executor());
    acceptor.accept(socket, ec);
    if (ec) break;  // would_block: the backlog is empty; EMFILE: not even one descriptor
    refuse(socket);
    socket.close(ec);
    ++refused;
  }
  fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  return refused;
}

void DescriptorReserve::WriteAndForget(asio::ip::tcp::socket& socket, std::string_view bytes) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  asio::write(socket, asio::buffer(bytes.data(), bytes.size()), ec);
}

}  // namespace bulkhead
