#include "bulkhead/client/faktory_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "bulkhead/protocol/pwdhash.h"

namespace bulkhead {
namespace {

// A scripted FWP server on 127.0.0.1:<ephemeral>. Serves connections one after the other: sends
// `greeting`, then for each received line calls the handler, whose return value is written back
// verbatim ("" = no reply; kClose = close the connection). Records every received line.
class FakeServer {
 public:
  static constexpr const char* kClose = "\x01close";
  using Handler = std::function<std::string(const std::string& line)>;

  FakeServer(std::string greeting, Handler handler)
      : greeting_(std::move(greeting)), handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_fd_, 8), 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~FakeServer() {
    stopping_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (conn_fd_ >= 0) shutdown(conn_fd_, SHUT_RDWR);
    }
    thread_.join();
  }

  int port() const { return port_; }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  void Serve() {
    while (!stopping_) {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        conn_fd_ = fd;
      }
      std::string hi = "+HI " + greeting_ + "\r\n";
      send(fd, hi.data(), hi.size(), MSG_NOSIGNAL);
      std::string buf;
      char chunk[4096];
      bool open = true;
      while (open) {
        ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) break;
        buf.append(chunk, static_cast<size_t>(n));
        size_t nl;
        while (open && (nl = buf.find('\n')) != std::string::npos) {
          std::string line = buf.substr(0, nl);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          buf.erase(0, nl + 1);
          {
            std::lock_guard<std::mutex> lock(mu_);
            lines_.push_back(line);
          }
          std::string reply = handler_(line);
          if (reply == kClose) {
            open = false;
          } else if (!reply.empty()) {
            send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
          }
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        conn_fd_ = -1;
      }
      close(fd);
    }
  }

  const std::string greeting_;
  const Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mu_;
  int conn_fd_ = -1;                // guarded by mu_
  std::vector<std::string> lines_;  // guarded by mu_
};

// Built by append: GCC 12 warns falsely (-Wrestrict) on "$" + std::to_string(n).
std::string Bulk(const std::string& s) {
  std::string out = "$";
  out += std::to_string(s.size());
  out += "\r\n";
  out += s;
  out += "\r\n";
  return out;
}

// Answers like a tiny Faktory: HELLO → OK, PUSH → OK, FETCH → a job then null, etc.
std::string DefaultHandler(const std::string& line) {
  std::string verb = line.substr(0, line.find(' '));
  if (verb == "HELLO" || verb == "PUSH" || verb == "ACK" || verb == "FLUSH" || verb == "MUTATE" ||
      verb == "QUEUE") {
    if (line.rfind("QUEUE LATENCY", 0) == 0) return Bulk(R"({"default":0.5})");
    if (line == "QUEUE")
      return "-ERR QUEUE needs a subcommand: PAUSE, RESUME, REMOVE or LATENCY\r\n";
    return "+OK\r\n";
  }
  if (verb == "PUSHB") return Bulk("{}");
  if (verb == "FETCH") {
    if (line == "FETCH") return "-ERR must call fetch with at least one queue\r\n";
    if (line.find("empty") != std::string::npos) return "$-1\r\n";
    return Bulk(R"({"jid":"abcdefgh1","jobtype":"noop","args":[1,"two"]})");
  }
  if (verb == "FAIL") {
    if (line.find("unknownjid") != std::string::npos) {
      return "-ERR Job not found unknownjid\r\n";
    }
    return "+OK\r\n";
  }
  if (verb == "BEAT") return Bulk(R"({"state":"quiet"})");
  if (verb == "INFO") return Bulk(R"({"faktory":{"queues":{}}})");
  if (verb == "END") return FakeServer::kClose;
  return "-ERR unknown command " + verb + "\r\n";
}

TEST(ParseFaktoryUrlTest, HostPortAndPassword) {
  Result<FaktoryUrl> u = ParseFaktoryUrl("tcp://:s%40cret@example.org:7500");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->host, "example.org");
  EXPECT_EQ(u->port, 7500);
  EXPECT_EQ(u->password, "s@cret");

  u = ParseFaktoryUrl("tcp://localhost");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "localhost");
  EXPECT_EQ(u->port, 7419);
  EXPECT_EQ(u->password, "");

  u = ParseFaktoryUrl("tcp://[::1]:7001/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 7001);
  EXPECT_FALSE(u->tls);

  u = ParseFaktoryUrl("tcp+tls://:pw@faktory.example.org:7419");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "faktory.example.org");
  EXPECT_EQ(u->password, "pw");
}

TEST(ParseFaktoryUrlTest, RejectsBadUrls) {
  EXPECT_EQ(ParseFaktoryUrl("http://x:1").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFaktoryUrl("tcp://x:port").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFaktoryUrl("tcp://x:70000").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFaktoryUrl("tcp://:%zz@x:1").status().code(), StatusCode::kInvalidArgument);
}

TEST(ParseFaktoryUrlTest, EnvironmentConvention) {
  unsetenv("FAKTORY_PROVIDER");
  unsetenv("FAKTORY_URL");
  Result<FaktoryUrl> u = FaktoryUrlFromEnvironment();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 7419);

  setenv("FAKTORY_URL", "tcp://:pw@10.0.0.1:9000", 1);
  u = FaktoryUrlFromEnvironment();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "10.0.0.1");
  EXPECT_EQ(u->password, "pw");

  setenv("FAKTORY_PROVIDER", "MY_FAKTORY", 1);
  setenv("MY_FAKTORY", "tcp://other:7001", 1);
  u = FaktoryUrlFromEnvironment();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "other");
  EXPECT_EQ(u->port, 7001);
  unsetenv("FAKTORY_PROVIDER");
  unsetenv("MY_FAKTORY");
  unsetenv("FAKTORY_URL");
}

TEST(FaktoryClientTest, HandshakeWithoutPasswordSendsCompactHello) {
  FakeServer server(R"({"v":2})", DefaultHandler);
  auto c = FaktoryClient::Connect("127.0.0.1", server.port());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->greeting(), R"({"v":2})");
  std::vector<std::string> lines = server.lines();
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0].rfind("HELLO {", 0), 0u);
  nlohmann::json hello = nlohmann::json::parse(lines[0].substr(6));
  EXPECT_EQ(hello["v"], 2);
  EXPECT_FALSE(hello.contains("wid"));
  EXPECT_FALSE(hello.contains("pwdhash"));
  EXPECT_EQ(lines[0].find(' ', 6), std::string::npos) << "HELLO JSON must have no spaces";
}

TEST(FaktoryClientTest, HandshakeWithPasswordAndWid) {
  std::string expected = PasswordHash("secret", "5f3a", 4321);
  FakeServer server(R"({"v":2,"i":4321,"s":"5f3a"})", [&](const std::string& line) -> std::string {
    if (line.rfind("HELLO ", 0) == 0) {
      nlohmann::json hello = nlohmann::json::parse(line.substr(6));
      if (hello.value("pwdhash", "") != expected) return "-ERR Invalid password\r\n";
      return "+OK\r\n";
    }
    return DefaultHandler(line);
  });
  FaktoryConnectOptions options;
  options.port = server.port();
  options.password = "secret";
  options.wid = "worker-1";
  options.labels = {"cpp"};
  auto c = FaktoryClient::Connect(options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  nlohmann::json hello = nlohmann::json::parse(server.lines()[0].substr(6));
  EXPECT_EQ(hello["wid"], "worker-1");
  EXPECT_EQ(hello["labels"], nlohmann::json::array({"cpp"}));
  EXPECT_TRUE(hello["pid"].is_number_integer());
  Result<std::string> beat = (*c)->Beat();
  ASSERT_TRUE(beat.ok()) << beat.status().ToString();
  EXPECT_EQ(*beat, "quiet");
}

TEST(FaktoryClientTest, WrongPasswordIsPermissionDeniedWithServerText) {
  FakeServer server(R"({"v":2,"i":1,"s":"ab"})", [](const std::string& line) -> std::string {
    return "-ERR Invalid password\r\n";
  });
  auto c = FaktoryClient::Connect("127.0.0.1", server.port(), "wrong");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(c.status().message().find("Invalid password"), std::string::npos)
      << c.status().message();
}

TEST(FaktoryClientTest, MissingPasswordIsRefusedLocally) {
  FakeServer server(R"({"v":2,"i":1,"s":"ab"})", DefaultHandler);
  auto c = FaktoryClient::Connect("127.0.0.1", server.port());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
}

TEST(FaktoryClientTest, ConnectionRefusedIsUnavailable) {
  int port;
  {
    FakeServer server(R"({"v":2})", DefaultHandler);
    port = server.port();
  }
  auto c = FaktoryClient::Connect("127.0.0.1", port);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable);
}

TEST(FaktoryClientTest, CommandsAndReplies) {
  FakeServer server(R"({"v":2})", DefaultHandler);
  auto c = FaktoryClient::Connect("127.0.0.1", server.port());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  FaktoryClient& client = **c;

  EXPECT_TRUE(client.Push(R"({"jid":"abcdefgh1","jobtype":"noop","args":[]})").ok());
  Result<std::string> bulk = client.PushBulk("[]");
  ASSERT_TRUE(bulk.ok());
  EXPECT_EQ(*bulk, "{}");

  auto job = client.Fetch({"critical", "default"});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_TRUE(job->has_value());
  EXPECT_EQ(nlohmann::json::parse(**job)["jid"], "abcdefgh1");

  auto none = client.Fetch({"empty"});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  EXPECT_TRUE(client.Ack("abcdefgh1").ok());
  EXPECT_TRUE(client.Fail("abcdefgh1", "RuntimeError", "boom", {"a.cc:1"}).ok());
  Status notfound = client.Fail("unknownjid", "E", "m");
  EXPECT_EQ(notfound.code(), StatusCode::kNotFound);
  EXPECT_EQ(notfound.message(), "FAIL: server replied -ERR Job not found unknownjid");

  Result<std::string> info = client.Info();
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(nlohmann::json::parse(*info).contains("faktory"));
  EXPECT_TRUE(client.Flush().ok());
  EXPECT_TRUE(client.Mutate(R"({"cmd": "clear", "target": "retries", "filter": {}})").ok());
  EXPECT_TRUE(client.QueueCommand("PAUSE", {"a", "b"}).ok());
  Result<std::string> latency = client.QueueLatency({"default"});
  ASSERT_TRUE(latency.ok());
  EXPECT_EQ(*latency, R"({"default":0.5})");
  EXPECT_EQ(client.Beat().status().code(), StatusCode::kFailedPrecondition);

  Status bad = client.Fetch({}).status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("must call fetch with at least one queue"), std::string::npos);

  EXPECT_TRUE(client.End().ok());
  EXPECT_EQ(client.Flush().code(), StatusCode::kUnavailable);

  // The fake server records END on its own thread: wait for it (bounded).
  std::vector<std::string> lines = server.lines();
  for (int i = 0; i < 500 && (lines.empty() || lines.back() != "END"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lines = server.lines();
  }
  EXPECT_NE(std::find(lines.begin(), lines.end(), "FETCH critical default"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      R"(MUTATE {"cmd":"clear","filter":{},"target":"retries"})"),
            lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "QUEUE PAUSE a b"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), R"(ACK {"jid":"abcdefgh1"})"), lines.end());
  EXPECT_EQ(lines.back(), "END");
}

TEST(FaktoryClientTest, PipelineReadsRepliesInOrder) {
  FakeServer server(R"({"v":2})", DefaultHandler);
  auto c = FaktoryClient::Connect("127.0.0.1", server.port());
  ASSERT_TRUE(c.ok());
  auto replies = (*c)->Pipeline({"FETCH default", "FETCH empty", "NOPE", "ACK {\"jid\":\"x\"}"});
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  ASSERT_EQ(replies->size(), 4u);
  EXPECT_EQ((*replies)[0].kind, FaktoryReply::Kind::kBulk);
  EXPECT_EQ((*replies)[1].kind, FaktoryReply::Kind::kNull);
  EXPECT_EQ((*replies)[2].kind, FaktoryReply::Kind::kError);
  EXPECT_EQ((*replies)[2].text, "ERR unknown command NOPE");
  EXPECT_TRUE((*replies)[3].is_ok());

  // SendRaw + ReadReply: the raw mode the benchmark uses.
  ASSERT_TRUE((*c)->SendRaw("FETCH default\r\nFETCH default\r\n").ok());
  for (int i = 0; i < 2; ++i) {
    auto r = (*c)->ReadReply();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, FaktoryReply::Kind::kBulk);
  }
}

TEST(FaktoryClientTest, LargeBulkRepliesSpanManyReads) {
  std::string big(1 << 20, 'x');
  std::string job = R"({"jid":"abcdefgh1","jobtype":"noop","args":[")" + big + "\"]}";
  FakeServer server(R"({"v":2})", [&](const std::string& line) -> std::string {
    if (line.rfind("FETCH", 0) == 0) return Bulk(job);
    return DefaultHandler(line);
  });
  auto c = FaktoryClient::Connect("127.0.0.1", server.port());
  ASSERT_TRUE(c.ok());
  for (int i = 0; i < 3; ++i) {
    auto f = (*c)->Fetch({"default"});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE(f->has_value());
    EXPECT_EQ(**f, job);
  }
}

TEST(FaktoryClientTest, ServerClosingMidReplyIsUnavailable) {
  FakeServer server(R"({"v":2})", [](const std::string& line) -> std::string {
    if (line.rfind("HELLO", 0) == 0) return "+OK\r\n";
    return FakeServer::kClose;
  });
  auto c = FaktoryClient::Connect("127.0.0.1", server.port());
  ASSERT_TRUE(c.ok());
  Status s = (*c)->Flush();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("FLUSH"), std::string::npos) << s.message();
}

TEST(FaktoryClientTest, MalformedReplyIsReported) {
  FakeServer server(R"({"v":2})", [](const std::string& line) -> std::string {
    if (line.rfind("HELLO", 0) == 0) return "+OK\r\n";
    return "?what\r\n";
  });
  auto c = FaktoryClient::Connect("127.0.0.1", server.port());
  ASSERT_TRUE(c.ok());
  Status s = (*c)->Flush();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("malformed reply"), std::string::npos) << s.message();
}

TEST(FaktoryClientTest, ReplyTimeoutIsBounded) {
  FakeServer server(R"({"v":2})", [](const std::string& line) -> std::string {
    if (line.rfind("HELLO", 0) == 0) return "+OK\r\n";
    return "";  // never answers
  });
  FaktoryConnectOptions options;
  options.port = server.port();
  options.timeout = std::chrono::milliseconds(200);
  auto c = FaktoryClient::Connect(options);
  ASSERT_TRUE(c.ok());
  auto start = std::chrono::steady_clock::now();
  Status s = (*c)->Flush();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  (*c)->End();
}

}  // namespace
}  // namespace bulkhead
