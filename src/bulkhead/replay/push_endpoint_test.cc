#include "bulkhead/replay/push_endpoint.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

namespace bulkhead {
namespace {

constexpr char kRequest[] =
    "POST /push/7/123 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi";
// Bound on every wait for the endpoint; generous for a loaded machine.
constexpr int kWaitMs = 10'000;

// A blocking loopback connection; -errno when connect fails.
int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

struct ReadResult {
  std::string bytes;
  bool closed = false;
  int error = 0;
};

// Reads until `want` bytes arrived, the peer closed, or `timeout_ms` passed.
ReadResult ReadFor(int fd, size_t want, int timeout_ms) {
  ReadResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (r.bytes.size() < want) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) break;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      r.error = errno;
      break;
    }
    if (n == 0) {
      r.closed = true;
      break;
    }
    r.bytes.append(buf, static_cast<size_t>(n));
  }
  return r;
}

std::unique_ptr<PushEndpoint> StartEndpoint(PushEndpointOptions o) {
  auto e = PushEndpoint::Start(o);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? std::move(*e) : nullptr;
}

// Sends kRequest and returns the answer's first line(s) (up to the end of the headers).
std::string Exchange(PushEndpoint& e, int fd) {
  EXPECT_EQ(write(fd, kRequest, sizeof kRequest - 1), static_cast<ssize_t>(sizeof kRequest - 1));
  ReadResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (r.bytes.find("\r\n\r\n") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    ReadResult more = ReadFor(fd, 1, kWaitMs);
    if (more.bytes.empty()) break;
    r.bytes += more.bytes;
  }
  return r.bytes;
}

TEST(PushEndpointTest, HealthyAnswers201KeepsAliveAndRecordsArrivals) {
  auto e = StartEndpoint({});
  ASSERT_NE(e, nullptr);
  int fd = Connect(e->port());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(Exchange(*e, fd).rfind("HTTP/1.1 201 Created\r\n", 0), 0u);
  EXPECT_EQ(Exchange(*e, fd).rfind("HTTP/1.1 201 Created\r\n", 0), 0u);  // same connection
  close(fd);
  auto arrivals = e->Arrivals();
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_EQ(arrivals[0].target, "/push/7/123");
  EXPECT_LE(arrivals[0].at_us, SteadyMicros());
  EXPECT_EQ(e->connections(), 1);
}

TEST(PushEndpointTest, ErrorStatuses) {
  auto e500 = StartEndpoint({.fault = Fault::k5xx});
  int fd = Connect(e500->port());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(Exchange(*e500, fd).rfind("HTTP/1.1 500 Internal Server Error\r\n", 0), 0u);
  close(fd);

  auto e429 = StartEndpoint({.fault = Fault::k429, .retry_after_seconds = 17});
  fd = Connect(e429->port());
  ASSERT_GE(fd, 0);
  std::string head = Exchange(*e429, fd);
  EXPECT_EQ(head.rfind("HTTP/1.1 429 Too Many Requests\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("Retry-After: 17\r\n"), std::string::npos) << head;
  close(fd);
}

TEST(PushEndpointTest, RefuseHasNothingListening) {
  auto e = StartEndpoint({.fault = Fault::kRefuse});
  ASSERT_NE(e->port(), 0);
  EXPECT_EQ(Connect(e->port()), -ECONNREFUSED);
}

TEST(PushEndpointTest, ResetCutsTheConnectionAfterReadingTheRequest) {
  auto e = StartEndpoint({.fault = Fault::kReset});
  int fd = Connect(e->port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, kRequest, sizeof kRequest - 1), static_cast<ssize_t>(sizeof kRequest - 1));
  ReadResult r = ReadFor(fd, 1, kWaitMs);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_EQ(r.error, ECONNRESET);
  close(fd);
  EXPECT_EQ(e->Arrivals().size(), 1u);
}

TEST(PushEndpointTest, BlackholeReadsAndHoldsUntilTheClientLeaves) {
  auto e = StartEndpoint({.fault = Fault::kBlackhole});
  int fd = Connect(e->port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, kRequest, sizeof kRequest - 1), static_cast<ssize_t>(sizeof kRequest - 1));
  // The request is read (recorded), and nothing comes back while we wait for it to be read.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (e->Arrivals().empty() && std::chrono::steady_clock::now() < deadline) {
    usleep(1000);
  }
  ASSERT_EQ(e->Arrivals().size(), 1u) << "the blackhole never read the request";
  ReadResult r = ReadFor(fd, 1, 200);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_FALSE(r.closed);
  close(fd);
}

TEST(PushEndpointTest, LateAnswersAfterTheDelay) {
  auto e = StartEndpoint({.fault = Fault::kLate, .late_delay = std::chrono::milliseconds(200)});
  int fd = Connect(e->port());
  ASSERT_GE(fd, 0);
  int64_t sent = SteadyMicros();
  EXPECT_EQ(Exchange(*e, fd).rfind("HTTP/1.1 201 Created\r\n", 0), 0u);
  EXPECT_GE(SteadyMicros() - sent, 200'000);  // never before the delay (a lower bound only)
  close(fd);
}

TEST(PushEndpointTest, SlowDripSendsHeadersThenOneByteAtATime) {
  auto e =
      StartEndpoint({.fault = Fault::kSlowDrip, .drip_interval = std::chrono::milliseconds(20)});
  int fd = Connect(e->port());
  ASSERT_GE(fd, 0);
  std::string head = Exchange(*e, fd);
  ASSERT_EQ(head.rfind("HTTP/1.1 201 Created\r\nContent-Length: 100000\r\n\r\n", 0), 0u) << head;
  std::string body = head.substr(head.find("\r\n\r\n") + 4);
  while (body.size() < 3) {
    ReadResult r = ReadFor(fd, 1, kWaitMs);
    ASSERT_EQ(r.bytes.size(), 1u) << "expected one dripped byte per read";
    body += r.bytes;
  }
  EXPECT_EQ(body, "xxx");
  close(fd);
}

TEST(PushEndpointTest, StopClosesHeldConnections) {
  auto e = StartEndpoint({.fault = Fault::kBlackhole});
  int fd = Connect(e->port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, kRequest, sizeof kRequest - 1), static_cast<ssize_t>(sizeof kRequest - 1));
  e.reset();
  ReadResult r = ReadFor(fd, 1, kWaitMs);
  EXPECT_TRUE(r.closed || r.error == ECONNRESET);
  close(fd);
}

}  // namespace
}  // namespace bulkhead
