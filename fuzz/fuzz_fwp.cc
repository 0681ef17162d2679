// Fuzz target: the Faktory work protocol as a client speaks it — the line splitter, the command
// table (src/bulkhead/protocol/commands.cc RunCommand) and every command's JSON, down to the engine
// and the memory store.
//
// Each input is one connection: a fresh memory store, Engine and FwpServer on a private
// io_context, and a real Session on one end of a socketpair; the input is written to the other end,
// which is then half-closed, and the replies are read until the session closes the connection.
// Nothing is shared between inputs, so every crash reproduces from its input alone.
//
// An input that does not start with "HELLO" gets a valid `HELLO {"v":2,...}\r\n` in front, so the
// fuzzer reaches the commands without having to learn the handshake. An input that starts with
// HELLO fuzzes the handshake itself, and runs twice: against a server without a password and
// against one with the password "fuzz-password" (its salt and iteration count are the same for
// every input: the Rng is seeded; fuzz/corpus/fwp/hello-password holds the pwdhash it accepts).
// Only HELLO depends on the password, and checking a pwdhash
// costs thousands of SHA-256 rounds, so the other inputs run without one. Lines end with "\n" or
// "\r\n", as on the wire. INFO answers as the server's does (the engine's snapshot rendered by
// view/info_json.h), without its process figures and delivery hosts.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "bulkhead/config/config.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/protocol/fwp_server.h"
#include "bulkhead/protocol/fwp_stream.h"
#include "bulkhead/protocol/session.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/view/info_json.h"

namespace {

namespace asio = boost::asio;

// The most a connection may take before the harness calls it a hang (libFuzzer's -timeout is
// longer, so this message comes first).
constexpr auto kConnectionDeadline = std::chrono::seconds(8);

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "fuzz_fwp: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

namespace {

void RunConnection(std::string_view raw, const char* password) {
  bulkhead::Config config;
  config.password = password;
  config.fetch_block_ms = 0;  // an empty FETCH answers at once instead of blocking 2 s
  bulkhead::DefaultRng rng(42);
  asio::io_context io;
  auto store = bulkhead::OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); });
  if (!store.ok()) Die("cannot open the memory store");
  {
    bulkhead::Engine engine(io, **store, config, bulkhead::SystemClock::Instance(), rng);
    bulkhead::FwpServer server(io, engine, config, rng);
    server.SetInfoSource([&engine](bulkhead::FwpServer::InfoCallback cb) {
      engine.Snapshot([cb = std::move(cb)](bulkhead::Result<bulkhead::EngineSnapshot> snapshot) {
        if (!snapshot.ok()) return cb(snapshot.status());
        bulkhead::InfoSnapshot info;
        info.engine = std::move(*snapshot);
        cb(bulkhead::RenderInfoJson(info));
      });
    });

    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) Die("socketpair failed");
    const int client = fds[1];
    ::fcntl(client, F_SETFL, ::fcntl(client, F_GETFL) | O_NONBLOCK);
    asio::ip::tcp::socket socket(io);
    boost::system::error_code ec;
    socket.assign(asio::ip::tcp::v4(), fds[0], ec);
    if (ec) Die("cannot assign the socket");
    std::weak_ptr<bulkhead::Session> weak;
    std::string input;
    {
      auto session =
          std::make_shared<bulkhead::Session>(bulkhead::FwpStream(std::move(socket)), server, 1);
      weak = session;
      session->Start(/*over_limit=*/false);
      if (raw.rfind("HELLO", 0) == 0) {
        input = raw;
      } else {
        input = "HELLO {\"v\":2,\"hostname\":\"fuzz\",\"wid\":\"fuzzwid1\",\"pid\":1}\r\n";
        input += raw;
      }
    }

    size_t sent = 0;
    bool half_closed = false;
    bool closed = false;
    char buf[65536];
    const auto deadline = std::chrono::steady_clock::now() + kConnectionDeadline;
    while (!closed) {
      if (sent < input.size()) {
        ssize_t n = ::send(client, input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
          sent += static_cast<size_t>(n);
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          sent = input.size();  // the server closed: the rest is never read
        }
      }
      if (sent == input.size() && !half_closed) {
        ::shutdown(client, SHUT_WR);
        half_closed = true;
      }
      for (;;) {
        ssize_t n = ::recv(client, buf, sizeof(buf), 0);
        if (n > 0) continue;  // replies are not checked; sanitizers and aborts are the oracle
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) closed = true;
        break;
      }
      io.restart();
      if (io.poll() == 0) {
        io.restart();
        io.run_one_for(std::chrono::milliseconds(1));
      }
      if (std::chrono::steady_clock::now() > deadline) {
        Die("the session neither answered nor closed the connection in time (a hang)");
      }
    }
    ::close(client);
    server.Stop();
    engine.Stop();
    // Let the handlers cancelled by Close/Stop run, so the session is destroyed here.
    io.restart();
    io.run_for(std::chrono::seconds(1));
    if (!weak.expired()) Die("the session outlived its connection and the server (a leak)");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  RunConnection(input, "");
  if (input.rfind("HELLO", 0) == 0) RunConnection(input, "fuzz-password");
  return 0;
}
