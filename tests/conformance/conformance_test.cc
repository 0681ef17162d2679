// The FWP conformance suite: replays each transcript in tests/conformance/*.fwp against a real
// bulkhead Server started in this process (its own free loopback ports, a fresh memory or SQLite
// store, the file's `! config` settings), over real sockets. The server runs on a SimulatedClock:
// its time, and every timer measured by it (handshake and line timeouts, FETCH block times), moves
// only at `! advance`, so no transcript waits for a timeout. One gtest per file; ctest runs one
// process per file (conformance.<name>), so a failure names the file and line. The format is in
// tests/conformance/README.md.
//
//   conformance_test [--store=memory|sqlite|memory-deferred|sqlite-deferred] [FILE.fwp ...]
//   (no file: every file of the suite). A -deferred store is wrapped in DeferredStore
//   (store/testing/deferred_store.h): it answers every call on a later turn of the server's loop,
//   as a networked store does.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "bulkhead/config/config.h"
#include "bulkhead/protocol/pwdhash.h"
#include "bulkhead/server/server.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/simulated_clock.h"
#include "tests/conformance/transcript.h"

namespace bulkhead::conformance {
namespace {

namespace fs = std::filesystem;
using Steady = std::chrono::steady_clock;

// How long one expected reply, or an expected close, may take.
constexpr int kReplyTimeoutMs = 8000;

std::string g_store_override;  // --store=…: overrides every file's store
constexpr std::string_view kDeferredSuffix = "-deferred";

std::string Shorten(std::string_view s, size_t max = 300) {
  std::string out;
  for (char c : s.substr(0, max)) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  if (s.size() > max) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

// One client connection: blocking socket, RESP replies parsed from a buffer. Each reply (and the
// close) is stamped with the server's clock when it is taken from the socket; Collect() takes what
// has arrived before the clock moves, so a stamp is the server time the reply was sent at.
class Conn {
 public:
  explicit Conn(const Clock& clock) : clock_(clock) {}
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Open(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return Status::Unavailable(std::string("connect: ") + std::strerror(errno));
    }
    last_send_ = last_event_ = clock_.Now();
    return Status::Ok();
  }

  Status Send(std::string_view bytes) {
    last_send_ = clock_.Now();
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return Status::Unavailable(std::string("send: ") + std::strerror(errno));
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }

  // One reply; type 0 with a description when the connection closed or nothing came in time.
  Reply Read(int timeout_ms) {
    auto deadline = Steady::now() + std::chrono::milliseconds(timeout_ms);
    if (!arrived_.empty()) {
      Reply r = std::move(arrived_.front().first);
      last_event_ = arrived_.front().second;
      arrived_.pop_front();
      return r;
    }
    for (;;) {
      Reply r;
      if (TryParse(&r)) {
        last_event_ = clock_.Now();
        return r;
      }
      if (eof_) {
        last_event_ = closed_at_.value_or(clock_.Now());
        return Reply{0, false,
                     buf_.empty()
                         ? "(connection closed)"
                         : "(connection closed after a partial reply: " + Shorten(buf_) + ")"};
      }
      if (!Fill(deadline)) {
        return Reply{0, false,
                     "(no reply within " + std::to_string(timeout_ms) + " ms" +
                         (buf_.empty() ? "" : "; partial: " + Shorten(buf_)) + ")"};
      }
    }
  }

  // Waits for the server to close; "" when it did with nothing more sent, otherwise what came.
  std::string WaitClosed(int timeout_ms) {
    auto deadline = Steady::now() + std::chrono::milliseconds(timeout_ms);
    if (!arrived_.empty()) return "unexpected reply: " + Shorten(arrived_.front().first.Render());
    while (!eof_ && buf_.empty()) {
      if (!Fill(deadline)) return "(still open after " + std::to_string(timeout_ms) + " ms)";
    }
    if (!buf_.empty()) return "unexpected bytes: " + Shorten(buf_);
    last_event_ = closed_at_.value_or(clock_.Now());
    return "";
  }

  // Takes the replies (and the close) that have arrived, without waiting, stamped now.
  void Collect() {
    while (!eof_ && Fill(Steady::now())) {
    }
    Reply r;
    while (TryParse(&r)) arrived_.emplace_back(std::move(r), clock_.Now());
    if (eof_ && !closed_at_) closed_at_ = clock_.Now();
  }

  // The server closed the connection (seen by a read).
  bool closed() const { return eof_; }

  // Bytes that already arrived and were not read (no waiting).
  std::string Unread() {
    Fill(Steady::now());
    std::string out;
    for (const auto& [reply, at] : arrived_) out += reply.Render() + "\n";
    return out + buf_;
  }

  // Milliseconds of the server's clock from the last send to the last reply or close read.
  int64_t ElapsedMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(last_event_ - last_send_).count();
  }

  // What the next reply answers: the lines sent and not yet answered, oldest first.
  std::deque<std::pair<int, std::string>> unanswered;
  std::string last_sent = "(connect)";
  int last_sent_line = 0;
  // The greeting, once read: its salt and iterations (password handshakes).
  bool greeted = false;
  std::string salt;
  int iterations = 1;

 private:
  // Reads more bytes; false on timeout.
  bool Fill(Steady::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) <= 0) return false;
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      eof_ = true;
      if (!closed_at_) closed_at_ = clock_.Now();
    } else {
      buf_.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }

  bool TryParse(Reply* r) {
    size_t nl = buf_.find("\r\n");
    if (nl == std::string::npos) return false;
    char type = buf_[0];
    std::string head = buf_.substr(1, nl - 1);
    if (type == '$') {
      long long len = std::strtoll(head.c_str(), nullptr, 10);
      if (len < 0) {
        *r = Reply{'$', true, ""};
        buf_.erase(0, nl + 2);
        return true;
      }
      if (buf_.size() < nl + 2 + static_cast<size_t>(len) + 2) return false;
      *r = Reply{'$', false, buf_.substr(nl + 2, static_cast<size_t>(len))};
      buf_.erase(0, nl + 2 + static_cast<size_t>(len) + 2);
      return true;
    }
    *r = Reply{type, false, head};
    buf_.erase(0, nl + 2);
    return true;
  }

  const Clock& clock_;
  int fd_ = -1;
  std::string buf_;
  std::deque<std::pair<Reply, TimePoint>> arrived_;  // parsed by Collect, not yet read
  bool eof_ = false;
  std::optional<TimePoint> closed_at_;
  TimePoint last_send_, last_event_;
};

// A bulkhead Server on 127.0.0.1 free ports with the transcript's settings, run on its own thread.
class InProcessServer {
 public:
  ~InProcessServer() { Stop(); }

  Status Start(const Transcript& t, const fs::path& dir) {
    Config base;
    base.listen = "127.0.0.1:0";
    base.http = "127.0.0.1:0";
    base.data_dir = (dir / "data").string();
    fs::create_directories(base.data_dir);
    std::string store = g_store_override.empty() ? t.store : g_store_override;
    ServerTestHooks hooks;
    if (store.ends_with(kDeferredSuffix)) {
      store.resize(store.size() - kDeferredSuffix.size());
      hooks.wrap_store = [](std::unique_ptr<Store> inner, Store::Poster post) {
        return std::make_unique<DeferredStore>(std::move(inner), std::move(post));
      };
    }
    if (store != "memory" && store != "sqlite") {
      return Status::InvalidArgument("unknown store " + store +
                                     " (memory, sqlite, memory-deferred or sqlite-deferred)");
    }
    base.store = store == "sqlite" ? "sqlite:" + (dir / "conformance.db").string() : "memory:";
    Config config = base;
    if (!t.config_lines.empty()) {
      fs::path toml = dir / "bulkhead.toml";
      std::ofstream out(toml);
      for (const auto& l : t.config_lines) out << l << "\n";
      out.close();
      auto loaded = LoadConfigFile(toml.string(), base);
      if (!loaded.ok()) return loaded.status();
      config = std::move(*loaded);
    }
    server_ = std::make_unique<Server>(std::move(config), clock_, std::move(hooks));
    Status s = server_->Start();
    if (!s.ok()) return s;
    thread_ = std::thread([this] { server_->Run(); });
    return Status::Ok();
  }

  void Stop() {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }

  uint16_t port() const { return server_->fwp_port(); }
  SimulatedClock& clock() { return clock_; }

 private:
  // Outlives the server and its timers. It starts at 2026-12-01T10:00:00Z.
  SimulatedClock clock_{FromUnixMicros(1'796'119'200'000'000)};
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

// Replays one transcript against a started server. Stops at the first failure, reported with
// ADD_FAILURE_AT(file, line) and the exchange.
class Replay {
 public:
  Replay(const Transcript& t, uint16_t port, SimulatedClock& clock, std::string password)
      : t_(t), port_(port), clock_(clock), password_(std::move(password)) {}

  void Run() {
    for (const Step& step : t_.steps) {
      if (!RunStep(step)) return;
    }
    // A short grace for replies still on their way, once for all connections.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const auto& [name, conn] : conns_) {
      std::string unread = conn->Unread();
      if (!unread.empty()) {
        ADD_FAILURE_AT(t_.path.c_str(), t_.steps.empty() ? 1 : t_.steps.back().line)
            << "at the end of the file, connection " << name
            << " holds a reply no `<` line read: " << Shorten(unread);
        return;
      }
    }
  }

 private:
  bool Fail(const Step& step, const std::string& message) {
    ADD_FAILURE_AT(t_.path.c_str(), step.line) << message;
    return false;
  }

  Conn* Current(const Step& step) {
    auto it = conns_.find(current_);
    if (it == conns_.end()) {
      Fail(step, "no connection: use `! connect` or `! hello` first");
      return nullptr;
    }
    return it->second.get();
  }

  bool Connect(const Step& step, std::string name) {
    ++connections_opened_;
    if (name.empty()) name = "c" + std::to_string(connections_opened_);
    if (conns_.contains(name)) return Fail(step, "connection " + name + " is already open");
    auto conn = std::make_unique<Conn>(clock_);
    Status s = conn->Open(port_);
    if (!s.ok()) return Fail(step, "connecting: " + s.message());
    conns_[name] = std::move(conn);
    current_ = name;
    return true;
  }

  // Reads the next reply on `conn` and compares it with `expected`.
  bool Expect(const Step& step, Conn& conn, const std::string& expected) {
    Reply r = conn.Read(kReplyTimeoutMs);
    std::string sent = conn.last_sent;
    int sent_line = conn.last_sent_line;
    if (!conn.unanswered.empty()) {
      sent_line = conn.unanswered.front().first;
      sent = conn.unanswered.front().second;
      conn.unanswered.pop_front();
    } else if (!conn.greeted) {
      sent = "(connect)";
      sent_line = 0;
    }
    if (!conn.greeted && r.type == '+' && r.text.starts_with("HI ")) {
      conn.greeted = true;
      auto hi = ParseJson(r.text.substr(3), 8);
      if (hi.ok() && hi->is_object()) {
        if (auto s = hi->find("s"); s != hi->end() && s->is_string()) conn.salt = *s;
        if (auto i = hi->find("i"); i != hi->end() && i->is_number_integer()) conn.iterations = *i;
      }
    }
    conn.greeted = true;
    std::string why;
    if (MatchReply(expected, r, &vars_, &why)) return true;
    std::ostringstream msg;
    msg << "reply to `" << Shorten(sent) << "`";
    if (sent_line > 0) msg << " (sent at line " << sent_line << ")";
    msg << " on connection " << current_ << "\n  expected: " << Shorten(expected, 2000)
        << "\n  actual:   " << Shorten(r.Render(), 2000);
    if (!why.empty()) msg << "\n  why:      " << why;
    return Fail(step, msg.str());
  }

  bool Hello(const Step& step) {
    // On the current connection, or a new one when there is none or the server closed it.
    auto it = conns_.find(current_);
    if ((it == conns_.end() || it->second->closed()) && !Connect(step, "")) return false;
    Conn& conn = *conns_[current_];
    if (!conn.greeted && !Expect(step, conn, "~\\+HI \\{.*\\}")) return false;
    nlohmann::json hello = {{"hostname", "conformance"}, {"pid", ::getpid()}, {"v", 2}};
    if (auto v = step.options.find("v"); v != step.options.end()) hello["v"] = std::stoi(v->second);
    if (auto w = step.options.find("wid"); w != step.options.end()) hello["wid"] = w->second;
    std::string password = password_;
    if (auto p = step.options.find("password"); p != step.options.end()) password = p->second;
    if (!password.empty()) {
      int iterations = hello["v"].get<int>() < 2 ? 1 : conn.iterations;
      hello["pwdhash"] = PasswordHash(password, conn.salt, iterations);
    }
    std::string line = "HELLO " + DumpJson(hello);
    Status s = conn.Send(line + "\r\n");
    if (!s.ok()) return Fail(step, s.message());
    conn.last_sent = line;
    conn.last_sent_line = step.line;
    conn.unanswered.emplace_back(step.line, line);
    return Expect(step, conn, "+OK");
  }

  bool RunStep(const Step& step) {
    switch (step.kind) {
      case Step::Kind::kConnect:
        return Connect(step, step.text);
      case Step::Kind::kUse:
        if (!conns_.contains(step.text)) return Fail(step, "no connection named " + step.text);
        current_ = step.text;
        return true;
      case Step::Kind::kHello:
        return Hello(step);
      case Step::Kind::kClose:
        if (!Current(step)) return false;
        conns_.erase(current_);
        current_.clear();
        return true;
      case Step::Kind::kWaitClosed: {
        Conn* conn = Current(step);
        if (!conn) return false;
        std::string got = conn->WaitClosed(kReplyTimeoutMs);
        if (!got.empty()) {
          return Fail(step, "expected the server to close connection " + current_ + " (after `" +
                                Shorten(conn->last_sent) + "`); " + got);
        }
        return true;  // kept, so that `! elapsed` can follow
      }
      case Step::Kind::kElapsed: {
        Conn* conn = Current(step);
        if (!conn) return false;
        int64_t ms = conn->ElapsedMs();
        if (ms < step.lo || ms > step.hi) {
          return Fail(step, "from `" + Shorten(conn->last_sent) + "` to the last reply took " +
                                std::to_string(ms) + " ms, expected " + std::to_string(step.lo) +
                                ".." + std::to_string(step.hi) + " ms");
        }
        return true;
      }
      case Step::Kind::kAdvance:
        return Advance(step);
      case Step::Kind::kSleep:
        std::this_thread::sleep_for(std::chrono::milliseconds(step.lo));
        return true;
      case Step::Kind::kSend:
      case Step::Kind::kSendRaw: {
        Conn* conn = Current(step);
        if (!conn) return false;
        auto expanded = ExpandSend(step.text, vars_, clock_.Now());
        if (!expanded.ok()) return Fail(step, expanded.status().message());
        std::string bytes = *expanded;
        if (step.kind == Step::Kind::kSendRaw) {
          auto decoded = DecodeEscapes(bytes);
          if (!decoded.ok()) return Fail(step, decoded.status().message());
          bytes = *decoded;
        } else {
          bytes += "\r\n";
        }
        // The server may have closed already (a refused connection); what it answered is what
        // the next `<` line checks, so a failed send is not the test's failure.
        (void)conn->Send(bytes);
        conn->last_sent = *expanded;
        conn->last_sent_line = step.line;
        conn->unanswered.emplace_back(step.line, *expanded);
        return true;
      }
      case Step::Kind::kExpect: {
        Conn* conn = Current(step);
        if (!conn) return false;
        return Expect(step, *conn, step.text);
      }
    }
    return Fail(step, "unknown step");
  }

  // `! advance`: once the server has read what was sent (and armed its timers), takes the replies
  // already sent, moves the clock, lets the server run the timers that fell due and takes what
  // they sent.
  bool Advance(const Step& step) {
    if (!clock_.Settle()) return Fail(step, "the server's event loop did not answer");
    for (auto& [name, conn] : conns_) conn->Collect();
    clock_.Advance(std::chrono::milliseconds(step.lo));
    if (!clock_.Settle()) return Fail(step, "the server's event loop did not answer");
    for (auto& [name, conn] : conns_) conn->Collect();
    return true;
  }

  const Transcript& t_;
  uint16_t port_;
  SimulatedClock& clock_;
  std::string password_;  // the server's, for `! hello` without password=
  std::map<std::string, std::unique_ptr<Conn>> conns_;
  std::string current_;
  int connections_opened_ = 0;
  Vars vars_;
};

class TranscriptTest : public ::testing::Test {
 public:
  explicit TranscriptTest(std::string path) : path_(std::move(path)) {}

  void TestBody() override {
    std::ifstream in(path_, std::ios::binary);
    ASSERT_TRUE(in) << "cannot read " << path_;
    std::stringstream text;
    text << in.rdbuf();
    auto t = ParseTranscript(path_, text.str());
    ASSERT_TRUE(t.ok()) << t.status().message();
    char tmpl[] = "/tmp/bulkhead-conformance.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    fs::path dir = tmpl;
    {
      InProcessServer server;
      Status s = server.Start(*t, dir);
      ASSERT_TRUE(s.ok()) << path_ << ": the server did not start: " << s.ToString();
      std::string password;
      for (const auto& l : t->config_lines) {
        if (l.starts_with("password")) {
          size_t q = l.find('"');
          if (q != std::string::npos) password = l.substr(q + 1, l.rfind('"') - q - 1);
        }
      }
      Replay(*t, server.port(), server.clock(), password).Run();
    }
    fs::remove_all(dir);
  }

 private:
  std::string path_;
};

}  // namespace
}  // namespace bulkhead::conformance

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (std::getenv("CONFORMANCE_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.starts_with("--store=")) {
      bulkhead::conformance::g_store_override = arg.substr(8);
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(BULKHEAD_CONFORMANCE_DIR)) {
      if (e.path().extension() == ".fwp") files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
  }
  for (const std::string& f : files) {
    std::string name = std::filesystem::path(f).stem().string();
    std::replace(name.begin(), name.end(), '-', '_');
    ::testing::RegisterTest(
        "Conformance", name.c_str(), nullptr, f.c_str(), f.c_str(), 1,
        [f]() -> ::testing::Test* { return new bulkhead::conformance::TranscriptTest(f); });
  }
  return RUN_ALL_TESTS();
}
