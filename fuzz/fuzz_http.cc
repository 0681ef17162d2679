// Fuzz target: the HTTP side as a client reaches it — Beast's request parser in
// src/bulkhead/http/http_server.cc, route dispatch, bearer auth and every route of
// src/bulkhead/server/server.cc and keys_api.cc (/healthz, /metrics, /api/info, /api/hosts,
// /api/workers, POST /api/workers/..., /api/keys...).
//
// Two real bulkhead Servers (memory store, loopback ports chosen by the kernel) run for the whole
// fuzzing session, each on its own thread: one without a password (every route open) and one with
// the password "fuzz-password" (`Authorization: Bearer fuzz-password` opens the guarded routes).
// Each input is sent as raw bytes on a new TCP connection to each server, which is then
// half-closed; the answers are read until the server closes the connection.
//
// An exception that escapes a server's event loop would end `bulkhead serve` (std::terminate); here
// it is printed with its what() and the process aborts, which libFuzzer reports as a crash.
// The servers keep state between inputs (keys added by PUT stay), so a crash that needs an earlier
// input may not reproduce alone; none of the known ones do.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "bulkhead/config/config.h"
#include "bulkhead/server/server.h"

namespace {

// Longer than any route takes, shorter than libFuzzer's -timeout.
constexpr int kAnswerDeadlineMs = 8000;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz_http: %s\n", what.c_str());
  std::abort();
}

uint16_t StartServer(const char* password) {
  bulkhead::Config config;
  config.listen = "127.0.0.1:0";
  config.http = "127.0.0.1:0";
  config.store = "memory:";
  // Never created: with the memory store and no vapid.pem there, the VAPID key is generated in
  // memory, so the harness writes nothing to disk.
  config.data_dir = "/nonexistent/bulkhead-fuzz";
  config.password = password;
  auto* server = new bulkhead::Server(config);  // lives until the process ends
  bulkhead::Status s = server->Start();
  if (!s.ok()) Die("the server did not start: " + s.ToString());
  std::thread([server] {
    try {
      server->Run();
    } catch (const std::exception& e) {
      Die(std::string("an exception escaped the server's event loop (bulkhead serve would "
                      "terminate): ") +
          e.what());
    } catch (...) {
      Die("an exception of unknown type escaped the server's event loop");
    }
    Die("the server's event loop returned");
  }).detach();
  return server->http_port();
}

void Exchange(uint16_t port, const uint8_t* data, size_t size) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    // A signal (libFuzzer's own timers) interrupted a blocking connect: it goes on in the
    // background; wait for it and read its result instead of calling connect again.
    if (errno != EINTR) Die(std::string("connect failed: ") + std::strerror(errno));
    pollfd p{fd, POLLOUT, 0};
    while (::poll(&p, 1, kAnswerDeadlineMs) < 0 && errno == EINTR) {
    }
    int error = 0;
    socklen_t len = sizeof(error);
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0 ||
        !(p.revents & POLLOUT)) {
      Die(std::string("connect failed after EINTR: ") + std::strerror(error));
    }
  }
  // Send everything (the server reads as it goes; it may also answer 400 and close early).
  size_t sent = 0;
  while (sent < size) {
    ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // closed by the server
    }
  }
  ::shutdown(fd, SHUT_WR);
  char buf[65536];
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kAnswerDeadlineMs);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) Die("the server neither answered nor closed the connection in time (a hang)");
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n > 0) continue;  // answers are not checked; sanitizers and aborts are the oracle
    if (n < 0 && errno == EINTR) continue;
    break;  // EOF or reset
  }
  ::close(fd);
}

uint16_t open_port = 0;
uint16_t guarded_port = 0;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  open_port = StartServer("");
  guarded_port = StartServer("fuzz-password");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Exchange(open_port, data, size);
  Exchange(guarded_port, data, size);
  return 0;
}
