// A blocking Faktory connection to a server on 127.0.0.1 for tests: one command at a time, as a
// worker or producer sends them. TCP_NODELAY is set, as real clients do: without it, Nagle's
// algorithm and the peer's delayed ACK hold every small command for about 40 ms.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace bulkhead::testing {

class FwpTestConnection {
 public:
  explicit FwpTestConnection(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~FwpTestConnection() { ::close(fd_); }
  FwpTestConnection(const FwpTestConnection&) = delete;
  FwpTestConnection& operator=(const FwpTestConnection&) = delete;

  bool connected() const { return connected_; }

  // Reads the greeting and says HELLO with `wid`; the reply ("+OK").
  std::string Hello(const std::string& wid) {
    if (!connected_) return "(not connected)";
    Read();
    return Call(R"(HELLO {"v":2,"hostname":"test","pid":1,"wid":")" + wid + R"("})");
  }

  // Sends `line` and returns its reply's first line.
  std::string Call(const std::string& line) {
    std::string out = line + "\r\n";
    ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
    return Read();
  }

  // FETCH: the job's jid, "" for none ($-1), or the reply that was neither.
  std::string Fetch(const std::string& queues) {
    std::string head = Call("FETCH " + queues);
    if (head == "$-1") return "";
    if (head.empty() || head[0] != '$') return "(error) " + head;
    auto job = nlohmann::json::parse(Read(), nullptr, false);
    return job.is_object() ? job.value("jid", "(no jid)") : "(not json)";
  }

  // The next reply line (the server's greeting first of all), waiting up to 10 s for it.
  std::string Read() {
    for (;;) {
      if (size_t nl = buffer_.find("\r\n"); nl != std::string::npos) {
        std::string reply = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 2);
        return reply;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10000) <= 0) return "(no reply within 10 s)";
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return "(connection closed)";
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  bool connected_ = false;
  std::string buffer_;
};

}  // namespace bulkhead::testing
