// Whole-server tests: a Server on loopback port 0 with the memory store, driven over real sockets.
#include "bulkhead/server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace bulkhead {
namespace {

// Blocking HTTP/1.0 GET on 127.0.0.1; returns the whole response ("" on failure).
std::string HttpGet(uint16_t port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return "";
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
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

class ServerTest : public ::testing::Test {
 protected:
  void Start(Config config) {
    config.listen = "127.0.0.1:0";
    config.http = "127.0.0.1:0";
    config.store = "memory:";
    config.data_dir = (std::filesystem::temp_directory_path() /
                       ("bulkhead_server_test_" + std::to_string(::getpid()))).string();
    server_ = std::make_unique<Server>(std::move(config));
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("bulkhead_server_test_" + std::to_string(::getpid())));
  }
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

TEST_F(ServerTest, MetricsShowQueueLatencyComputedAtScrapeTime) {
  Start(Config{});
  std::string replies =
      Fwp(server_->fwp_port(), "PUSH {\"jid\":\"metrics01\",\"jobtype\":\"t\",\"args\":[],"
                               "\"queue\":\"slow\"}\r\n");
  ASSERT_NE(replies.find("+OK"), std::string::npos) << replies;
  std::string metrics = HttpGet(server_->http_port(), "/metrics");
  EXPECT_NE(metrics.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("bulkhead_queue_size{queue=\"slow\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("bulkhead_queue_latency_seconds{queue=\"slow\"}"), std::string::npos);
  std::string health = HttpGet(server_->http_port(), "/healthz");
  EXPECT_NE(health.find("200 OK"), std::string::npos);
  EXPECT_NE(HttpGet(server_->http_port(), "/nope").find("404"), std::string::npos);
}

TEST_F(ServerTest, StatsdSendsTheSameFigures) {
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

TEST_F(ServerTest, BadConfigIsAClearStartError) {
  Config config;
  config.durability = "sometimes";
  Server server(config);
  Status s = server.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("durability"), std::string::npos);
}

}  // namespace
}  // namespace bulkhead
