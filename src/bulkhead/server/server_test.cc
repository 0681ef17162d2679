// Whole-server tests: a Server on loopback port 0 with the memory store, driven over real sockets.
// Every test runs twice: "Inline" on the store as opened, "Deferred" on it wrapped in DeferredStore
// (every answer on a later turn of the server's loop, as from a networked store).
#include "bulkhead/server/server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "bulkhead/encoders/vapid.h"
#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/server/testing/fwp_test_connection.h"
#include "bulkhead/store/testing/shared_store.h"
#include "bulkhead/store/testing/store_timing.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

// Blocking HTTP/1.0 request on 127.0.0.1 with extra header lines ("Name: value\r\n" each) and a
// body; returns the whole response ("" on failure).
std::string HttpRequest(uint16_t port, const std::string& method, const std::string& path,
                        const std::string& headers = "", const std::string& body = "") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return "";
  }
  std::string req = method + " " + path + " HTTP/1.0\r\nHost: x\r\n" + headers +
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, n);
  }
  ::close(fd);
  return out;
}

// Blocking HTTP/1.0 GET on 127.0.0.1; returns the whole response ("" on failure).
std::string HttpGet(uint16_t port, const std::string& path) {
  return HttpRequest(port, "GET", path);
}

// A fresh 2048-bit RSA private key as PEM (PKCS#8), written by OpenSSL.
std::string RsaPrivatePem() {
  EVP_PKEY* pkey = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(pkey);
  return pem;
}

// The status line's code, or 0.
int HttpStatus(const std::string& response) {
  if (response.size() < 12 || response.rfind("HTTP/1.", 0) != 0) return 0;
  return std::atoi(response.c_str() + 9);
}

// Sends raw FWP lines and reads `replies` reply lines.
std::string Fwp(uint16_t port, const std::string& lines) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::string all = "HELLO {\"v\":2}\r\n" + lines + "END\r\n";
  ::send(fd, all.data(), all.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, n);
  }
  ::close(fd);
  return out;
}

using FwpConnection = testing::FwpTestConnection;

// The hooks that wrap the server's store as the test's parameter says.
ServerTestHooks HooksFor(StoreTiming timing) {
  ServerTestHooks hooks;
  if (timing == StoreTiming::kDeferred) {
    hooks.wrap_store = [](std::unique_ptr<Store> inner, Store::Poster post) {
      return std::make_unique<DeferredStore>(std::move(inner), std::move(post));
    };
  }
  return hooks;
}

class ServerTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  void Start(Config config) {
    config.listen = "127.0.0.1:0";
    config.http = "127.0.0.1:0";
    if (config.store.empty()) config.store = "memory:";
    config.data_dir = (std::filesystem::temp_directory_path() /
                       ("bulkhead_server_test_" + std::to_string(::getpid())))
                          .string();
    server_ =
        std::make_unique<Server>(std::move(config), SystemClock::Instance(), HooksFor(GetParam()));
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    thread_ = std::thread([this] {
      server_->Run();
      run_returned_ = true;
    });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("bulkhead_server_test_" + std::to_string(::getpid())));
  }
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::atomic<bool> run_returned_{false};  // Run returned (a Stop, or the server stopped itself)
};

INSTANTIATE_TEST_SUITE_P(StoreTimings, ServerTest, kBothTimings, StoreTimingName);

TEST_P(ServerTest, MetricsShowQueueLatencyComputedAtScrapeTime) {
  Start(Config{});
  std::string replies = Fwp(server_->fwp_port(),
                            "PUSH {\"jid\":\"metrics01\",\"jobtype\":\"t\",\"args\":[],"
                            "\"queue\":\"slow\"}\r\n");
  ASSERT_NE(replies.find("+OK"), std::string::npos) << replies;
  std::string metrics = HttpGet(server_->http_port(), "/metrics");
  EXPECT_NE(metrics.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("bulkhead_queue_size{queue=\"slow\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("bulkhead_queue_latency_seconds{queue=\"slow\"}"), std::string::npos);
  // The delivery gauges, registered by the server over the dispatcher's published snapshot.
  EXPECT_NE(metrics.find("\nbulkhead_parked_jobs 0\n"), std::string::npos) << metrics;
  std::string health = HttpGet(server_->http_port(), "/healthz");
  EXPECT_NE(health.find("200 OK"), std::string::npos);
  EXPECT_NE(HttpGet(server_->http_port(), "/nope").find("404"), std::string::npos);
}

// /metrics shows bulkhead_store_up with `value` and the node label (a Redis store is shared).
::testing::Matcher<std::string> StoreUp(const std::string& value) {
  return ::testing::ContainsRegex("\nbulkhead_store_up\\{node=\"[^\"]+\"\\} " + value + "\n");
}

TEST(ServerSharedStoreTest, PerNodeFiguresCarryTheNodeAndTheStoresDoNot) {
  ServerTestHooks hooks;
  hooks.wrap_store = [](std::unique_ptr<Store> inner, Store::Poster post) {
    return std::make_unique<SharedStore>(std::move(inner), std::move(post));
  };
  Config config;
  config.listen = "127.0.0.1:0";
  config.http = "127.0.0.1:0";
  config.store = "memory:";
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_server_shared_test_" + std::to_string(::getpid()));
  config.data_dir = dir.string();
  Server server(config, SystemClock::Instance(), hooks);
  ASSERT_TRUE(server.Start().ok());
  std::thread loop([&] { server.Run(); });
  std::string replies = Fwp(server.fwp_port(),
                            "PUSH {\"jid\":\"nodelabel1\",\"jobtype\":\"t\",\"args\":[],"
                            "\"queue\":\"shared\"}\r\n");
  std::string metrics = HttpGet(server.http_port(), "/metrics");
  server.Stop();
  loop.join();
  std::filesystem::remove_all(dir);
  ASSERT_NE(replies.find("+OK"), std::string::npos) << replies;
  // Cluster-wide (read from the shared store): no node label.
  EXPECT_NE(metrics.find("\nbulkhead_queue_size{queue=\"shared\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("\nbulkhead_jobs_processed_total 0\n"), std::string::npos) << metrics;
  // This node's own: labelled with its node id (host-PID-suffix, as in the store's {NS}:nodes).
  std::string node = "node=\"";
  size_t at = metrics.find("\nbulkhead_workers_connected{" + node);
  ASSERT_NE(at, std::string::npos) << metrics;
  size_t value = at + std::string("\nbulkhead_workers_connected{").size() + node.size();
  std::string id = metrics.substr(value, metrics.find('"', value) - value);
  EXPECT_NE(id.find("-" + std::to_string(::getpid()) + "-"), std::string::npos) << id;
  EXPECT_NE(metrics.find("\nbulkhead_parked_jobs{node=\"" + id + "\"} 0\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("bulkhead_connections_shed_total{listener=\"faktory\",reason=\"fd_limit\","
                         "node=\"" +
                         id + "\"} 0"),
            std::string::npos)
      << metrics;
}

TEST_P(ServerTest, MetricsHaveNoNodeLabelOnAStoreOfOneNode) {
  Start(Config{});
  std::string metrics = HttpGet(server_->http_port(), "/metrics");
  EXPECT_NE(metrics.find("\nbulkhead_workers_connected 0\n"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("node=\""), std::string::npos) << metrics;
}

TEST_P(ServerTest, ADegradedStoreRefusesPushAndFetchAndFailsHealthz) {
  Config config;
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_server_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir / "full.db");
  config.store = "sqlite:" + (dir / "full.db").string();
  config.store_max_page_count_for_tests = 64;  // 256 KiB: a few dozen 8 KiB jobs fill it
  Start(config);
  EXPECT_EQ(HttpStatus(HttpGet(server_->http_port(), "/healthz")), 200);
  EXPECT_NE(HttpGet(server_->http_port(), "/metrics").find("\nbulkhead_store_degraded 0\n"),
            std::string::npos);
  // One connection, one PUSH at a time (each reply read before the next PUSH is sent) until the
  // file is full: the failing commit then holds exactly one PUSH, and once its -ERR has arrived the
  // store is degraded (the writer marks it before it answers).
  FwpConnection conn(server_->fwp_port());
  ASSERT_TRUE(conn.Read().starts_with("+HI "));
  ASSERT_EQ(conn.Call("HELLO {\"v\":2}"), "+OK");
  std::string first_error;
  for (int i = 0; i < 100 && first_error.empty(); ++i) {
    std::string reply =
        conn.Call("PUSH {\"jid\":\"degraded" + std::to_string(1000 + i) +
                  "\",\"jobtype\":\"t\",\"args\":[\"" + std::string(8192, 'x') + "\"]}");
    if (reply != "+OK") first_error = reply;
  }
  ASSERT_FALSE(first_error.empty()) << "the capped file never filled up";
  EXPECT_NE(first_error.find("database or disk is full"), std::string::npos) << first_error;
  // Every later command is refused with the reason, FETCH included (not a silent $-1).
  for (const char* line :
       {"PUSH {\"jid\":\"degraded2000\",\"jobtype\":\"t\",\"args\":[]}", "FETCH default"}) {
    std::string reply = conn.Call(line);
    EXPECT_TRUE(reply.starts_with("-ERR store degraded: the last commit to "))
        << line << ": " << reply;
  }
  std::string health = HttpGet(server_->http_port(), "/healthz");
  EXPECT_EQ(HttpStatus(health), 503) << health;
  EXPECT_NE(health.find("store degraded: the last commit to "), std::string::npos) << health;
  EXPECT_NE(HttpGet(server_->http_port(), "/metrics").find("\nbulkhead_store_degraded 1\n"),
            std::string::npos);
  // Reads still answer.
  EXPECT_EQ(HttpStatus(HttpGet(server_->http_port(), "/api/info")), 200);
}

// The push relay's HTTP side (docs/relay.md, "What the relay answers"): the health check, refusals
// of paths and methods, the per-token limit (429 + Retry-After), and a store that cannot take a
// message answered 503 + Retry-After at once, never a blocked request.
TEST_P(ServerTest, RelayAnswersLimitsAndAFullStoreWithoutBlocking) {
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_server_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(VapidKey::Generate()->SaveFile((dir / "AuthKey.p8").string()).ok());
  std::filesystem::remove_all(dir / "relay.db");
  Config config;
  config.store = "sqlite:" + (dir / "relay.db").string();
  config.store_max_page_count_for_tests = 64;
  config.relay_listen = "127.0.0.1:0";
  RelayApnsApp app;
  app.name = "toot";
  app.topic = "cx.c3.toot";
  app.team_id = "TEAM";
  app.key_id = "KEY";
  app.key_file = (dir / "AuthKey.p8").string();
  app.production_url = "https://127.0.0.1:1";  // closed: forwards fail and are retried
  app.limits.token_burst = 2;
  app.limits.token_per_minute = 1;
  config.relay.apns.push_back(app);
  Start(config);
  const uint16_t relay = server_->relay_port();
  ASSERT_NE(relay, 0);
  EXPECT_EQ(HttpStatus(HttpGet(relay, "/relay-to/_health")), 200);
  EXPECT_EQ(HttpStatus(HttpGet(relay, "/relay-to/production/00ff")), 405);
  EXPECT_EQ(HttpStatus(HttpRequest(relay, "POST", "/relay-to/fcm/tok")), 404);  // no FCM app
  const std::string aes = "Content-Encoding: aes128gcm\r\nTTL: 60\r\n";
  EXPECT_EQ(HttpStatus(HttpRequest(relay, "POST", "/relay-to/production/00ff", aes, "x")), 201);
  EXPECT_EQ(HttpStatus(HttpRequest(relay, "POST", "/relay-to/production/00ff", aes, "x")), 201);
  std::string limited = HttpRequest(relay, "POST", "/relay-to/production/00ff", aes, "x");
  EXPECT_EQ(HttpStatus(limited), 429) << limited;
  EXPECT_NE(limited.find("Retry-After: 60"), std::string::npos) << limited;
  // Fill the store (each message to a token of its own): the relay answers 503 once it is full.
  std::string full;
  for (int i = 0; i < 400 && HttpStatus(full) != 503; ++i) {
    char token[16];
    std::snprintf(token, sizeof token, "%08x", i + 1);
    full = HttpRequest(relay, "POST", std::string("/relay-to/production/") + token, aes,
                       std::string(3000, 'y'));
    ASSERT_TRUE(HttpStatus(full) == 201 || HttpStatus(full) == 503) << full;
  }
  ASSERT_EQ(HttpStatus(full), 503) << "the capped store never filled up";
  EXPECT_NE(full.find("Retry-After: 10"), std::string::npos) << full;
  EXPECT_NE(full.find("could not be stored"), std::string::npos) << full;
}

// Redis down at start, then up, then lost, then back: the node starts, /healthz and
// bulkhead_store_up tell, commands answer "-ERR store unavailable: ..." (each within the
// connection's 10 s read bound), and the node resumes by itself. Waits poll /healthz, bounded.
TEST_P(ServerTest, RedisUnreachableAtStartOrLostMidRunAnswersUnavailableAndResumes) {
  uint16_t port = 0;
  {  // a free port nothing listens on: a server started and stopped
    auto probe = RedisServerProcess::Start();
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    port = probe.value()->port();
  }
  std::string where = "127.0.0.1:" + std::to_string(port);
  Config config;
  config.store = "redis://" + where;
  Start(config);
  uint16_t http = server_->http_port();
  auto healthy = [&] { return HttpStatus(HttpGet(http, "/healthz")) == 200; };
  std::string health = HttpGet(http, "/healthz");
  EXPECT_EQ(HttpStatus(health), 503) << health;
  EXPECT_NE(health.find("store unavailable: redis " + where), std::string::npos) << health;
  EXPECT_THAT(HttpGet(http, "/metrics"), StoreUp("0"));
  FwpConnection conn(server_->fwp_port());
  ASSERT_TRUE(conn.Read().starts_with("+HI "));
  ASSERT_EQ(conn.Call("HELLO {\"v\":2}"), "+OK");
  std::string refused = conn.Call("PUSH {\"jid\":\"redisdown01\",\"jobtype\":\"t\",\"args\":[]}");
  EXPECT_TRUE(refused.starts_with("-ERR store unavailable: redis " + where)) << refused;

  auto redis = RedisServerProcess::Start({.port = port});
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  Status up = WaitFor(healthy, std::chrono::seconds(15), "/healthz 200 once redis is up");
  ASSERT_TRUE(up.ok()) << up.ToString() << "\n" << HttpGet(http, "/healthz");
  EXPECT_THAT(HttpGet(http, "/metrics"), StoreUp("1"));
  EXPECT_EQ(conn.Call("PUSH {\"jid\":\"redisup0001\",\"jobtype\":\"t\",\"args\":[]}"), "+OK");
  EXPECT_TRUE(conn.Call("FETCH default").starts_with("$"));
  EXPECT_NE(conn.Read().find("redisup0001"), std::string::npos);

  redis.value()->Kill();
  refused = conn.Call("PUSH {\"jid\":\"redislost01\",\"jobtype\":\"t\",\"args\":[]}");
  EXPECT_TRUE(refused.starts_with("-ERR store unavailable: ")) << refused;
  Status down = WaitFor([&] { return !healthy(); }, std::chrono::seconds(15), "/healthz 503");
  ASSERT_TRUE(down.ok()) << down.ToString();
  health = HttpGet(http, "/healthz");
  EXPECT_NE(health.find("store unavailable: "), std::string::npos) << health;

  auto again = RedisServerProcess::Start({.port = port});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  up = WaitFor(healthy, std::chrono::seconds(15), "/healthz 200 once redis is back");
  ASSERT_TRUE(up.ok()) << up.ToString() << "\n" << HttpGet(http, "/healthz");
  EXPECT_EQ(conn.Call("PUSH {\"jid\":\"redisback01\",\"jobtype\":\"t\",\"args\":[]}"), "+OK");
}

// Redis down at start, then up with a namespace of another layout version: the node stops by
// itself, and exit_status() (what `bulkhead serve` exits with) names both versions.
TEST_P(ServerTest, ARedisLayoutFoundAfterAStartWithoutRedisStopsTheServer) {
  // The namespace is written, saved and the server stopped; it comes back with that data.
  auto first = RedisServerProcess::Start({.persistence = true});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  for (std::vector<std::string> argv :
       {std::vector<std::string>{"HSET", "{bulkhead}:meta", "layout", "99"},
        std::vector<std::string>{"SAVE"}}) {
    auto r = BlockingRedisCommand(first.value()->connect_options(), argv);
    ASSERT_TRUE(r.ok() && !r->is_error()) << argv[0];
  }
  uint16_t port = first.value()->port();
  first.value()->Stop();
  Config config;
  config.store = "redis://127.0.0.1:" + std::to_string(port);
  Start(config);
  uint16_t http = server_->http_port();
  EXPECT_EQ(HttpStatus(HttpGet(http, "/healthz")), 503);
  auto again =
      RedisServerProcess::Start({.port = port,
                                 .persistence = true,
                                 .extra_config = {"dir \"" + first.value()->dir() + "\""}});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  Status stopped =
      WaitFor([&] { return run_returned_.load(); }, std::chrono::seconds(15), "the server stops");
  ASSERT_TRUE(stopped.ok()) << stopped.ToString();
  thread_.join();
  EXPECT_EQ(server_->exit_status().code(), StatusCode::kFailedPrecondition)
      << server_->exit_status().ToString();
  EXPECT_NE(server_->exit_status().message().find("layout version 99"), std::string::npos)
      << server_->exit_status().message();
}

TEST_P(ServerTest, StatsdSendsTheSameFigures) {
  int udp = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(udp, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(udp, reinterpret_cast<sockaddr*>(&addr), &len);
  Config config;
  config.statsd.address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  config.statsd.interval_seconds = 1;
  config.statsd.flavor = "dogstatsd";
  config.statsd.tags = {"env:test"};
  Start(config);
  std::string received;
  for (int i = 0; i < 50 && received.find("queue_size") == std::string::npos; ++i) {
    Fwp(server_->fwp_port(), "PUSH {\"jid\":\"statsd0" + std::to_string(i % 10) + "x" +
                                 std::to_string(i) + "\",\"jobtype\":\"t\",\"args\":[]}\r\n");
    pollfd p{udp, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      char buf[65536];
      ssize_t n = ::recv(udp, buf, sizeof(buf), 0);
      if (n > 0) received.append(buf, n);
    }
  }
  ::close(udp);
  EXPECT_NE(received.find("bulkhead.queue_size:"), std::string::npos) << received;
  EXPECT_NE(received.find("env:test"), std::string::npos) << received;
}

TEST_P(ServerTest, KeysApiNeedsTheBearerTokenAndNeverShowsPrivateKeys) {
  Config config;
  config.password = "s3cret";
  Start(config);
  uint16_t port = server_->http_port();
  std::string pem = RsaPrivatePem();
  const std::string path = "/api/keys/https%3A%2F%2Fsocial.example%2Fusers%2Falice%23main-key";
  const std::string auth = "Authorization: Bearer s3cret\r\n";

  std::string r = HttpRequest(port, "PUT", path, "", pem);
  EXPECT_EQ(HttpStatus(r), 401) << r;
  EXPECT_NE(r.find("WWW-Authenticate: Bearer"), std::string::npos) << r;
  EXPECT_EQ(HttpStatus(HttpRequest(port, "PUT", path, "Authorization: Bearer nope\r\n", pem)), 401);
  EXPECT_EQ(HttpStatus(HttpRequest(port, "GET", "/api/keys")), 401);
  EXPECT_EQ(HttpStatus(HttpRequest(port, "DELETE", path)), 401);
  EXPECT_EQ(HttpStatus(HttpRequest(port, "POST", "/api/workers/w1/quiet")), 401);

  r = HttpRequest(port, "PUT", path, auth, pem);
  EXPECT_EQ(HttpStatus(r), 201) << r;
  EXPECT_NE(r.find("\"key_id\":\"https://social.example/users/alice#main-key\""), std::string::npos)
      << r;
  EXPECT_NE(r.find("\"algorithm\":\"rsa-sha256\""), std::string::npos) << r;
  EXPECT_NE(r.find("\"bits\":2048"), std::string::npos) << r;
  EXPECT_NE(r.find("\"fingerprint\":\"SHA256:"), std::string::npos) << r;
  EXPECT_EQ(r.find("PRIVATE KEY"), std::string::npos) << r;
  EXPECT_EQ(HttpStatus(HttpRequest(port, "PUT", path, auth, pem)), 200);

  r = HttpRequest(port, "GET", "/api/keys", auth);
  EXPECT_EQ(HttpStatus(r), 200) << r;
  EXPECT_NE(r.find("BEGIN PUBLIC KEY"), std::string::npos) << r;
  EXPECT_EQ(r.find("PRIVATE KEY"), std::string::npos) << r;
  EXPECT_EQ(HttpStatus(HttpRequest(port, "GET", path, auth)), 200);

  r = HttpRequest(port, "PUT", "/api/keys/other", auth, "not a key");
  EXPECT_EQ(HttpStatus(r), 400) << r;
  EXPECT_NE(r.find("not PEM"), std::string::npos) << r;
  r = HttpRequest(port, "PUT", "/api/keys/other", auth, "");
  EXPECT_EQ(HttpStatus(r), 400) << r;
  EXPECT_NE(r.find("empty"), std::string::npos) << r;
  EXPECT_EQ(HttpStatus(HttpRequest(port, "PUT", "/api/keys/bad%zz", auth, pem)), 400);

  EXPECT_EQ(HttpStatus(HttpRequest(port, "DELETE", path, auth)), 204);
  EXPECT_EQ(HttpStatus(HttpRequest(port, "DELETE", path, auth)), 404);
  EXPECT_EQ(HttpStatus(HttpRequest(port, "GET", path, auth)), 404);
  EXPECT_EQ(HttpRequest(port, "GET", "/api/keys", auth).find("social.example"), std::string::npos);
}

TEST_P(ServerTest, PushOfAnActivityPubJobNeedsARegisteredKey) {
  Start(Config{});
  uint16_t port = server_->http_port();
  auto job = [](const std::string& jid) {
    return "PUSH {\"jid\":\"" + jid +
           "\",\"jobtype\":\"activitypub\",\"args\":[{"
           "\"inbox\":\"https://remote.example/inbox\",\"activity\":{\"type\":\"Note\"},"
           "\"key_id\":\"https://social.example/users/bob#main-key\"}]}\r\n";
  };
  std::string replies = Fwp(server_->fwp_port(), job("apunknown01"));
  EXPECT_NE(replies.find("no signing key is registered for"), std::string::npos) << replies;
  std::string pem = RsaPrivatePem();
  // No password configured: no token needed.
  ASSERT_EQ(
      HttpStatus(HttpRequest(
          port, "PUT", "/api/keys/https%3A%2F%2Fsocial.example%2Fusers%2Fbob%23main-key", "", pem)),
      201);
  replies = Fwp(server_->fwp_port(), job("apknown0001"));
  EXPECT_NE(replies.find("+OK"), std::string::npos) << replies;
  // The job as stored and shown carries the key id only.
  std::string info = HttpGet(port, "/api/info");
  EXPECT_EQ(info.find("PRIVATE KEY"), std::string::npos);
}

TEST_P(ServerTest, ApiViewsAndInfoShowTheSameFigures) {
  Start(Config{});
  uint16_t port = server_->http_port();
  Fwp(server_->fwp_port(), "PUSH {\"jid\":\"apiview01\",\"jobtype\":\"t\",\"args\":[]}\r\n");
  std::string response = HttpGet(port, "/api/info");
  ASSERT_EQ(HttpStatus(response), 200) << response;
  auto info = nlohmann::json::parse(response.substr(response.find("\r\n\r\n") + 4));
  EXPECT_EQ(info["faktory"]["queues"]["default"], 1);
  EXPECT_EQ(info["hosts"], nlohmann::json::array()) << "the dispatcher's hosts, none yet";
  EXPECT_EQ(info["server"]["store"], "memory");
  std::string fwp = Fwp(server_->fwp_port(), "INFO\r\n");
  EXPECT_NE(fwp.find("\"queues\":{\"default\":1}"), std::string::npos) << fwp;
  response = HttpGet(port, "/api/hosts");
  EXPECT_EQ(response.substr(response.find("\r\n\r\n") + 4), "[]");
  response = HttpGet(port, "/api/workers");
  EXPECT_EQ(response.substr(response.find("\r\n\r\n") + 4), "[]");
}

TEST_P(ServerTest, BadConfigIsAClearStartError) {
  Config config;
  config.durability = "sometimes";
  Server server(config, SystemClock::Instance(), HooksFor(GetParam()));
  Status s = server.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("durability"), std::string::npos);
}

}  // namespace
}  // namespace bulkhead
