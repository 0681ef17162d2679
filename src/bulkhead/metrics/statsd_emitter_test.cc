#include "bulkhead/metrics/statsd_emitter.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

using ::testing::HasSubstr;

// A UDP socket on 127.0.0.1, port chosen by the kernel: the "StatsD agent".
class UdpReceiver {
 public:
  UdpReceiver() {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~UdpReceiver() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // The next datagram, or "" after `timeout` (a bounded wait, not a sleep).
  std::string Receive(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return "";
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

StatsdConfig Config(const std::string& address) {
  StatsdConfig c;
  c.address = address;
  c.prefix = "bulkhead";
  c.flavor = StatsdFlavor::kDogStatsd;
  c.tags = {{"env", "test"}};
  c.interval = std::chrono::milliseconds(20);
  return c;
}

TEST(StatsdEmitterTest, SendsTheRegistryOverUdp) {
  UdpReceiver agent;
  Registry registry;
  double latency = 0.5;
  ASSERT_TRUE(registry
                  .AddCallbackGauge(metric_names::kQueueLatencySeconds, "L.", {"queue"},
                                    [&]() -> Result<std::vector<MetricSample>> {
                                      return std::vector<MetricSample>{{{"push"}, latency}};
                                    })
                  .ok());
  StatsdEmitter emitter(registry, Config(agent.address()));
  ASSERT_TRUE(emitter.Open().ok());
  ASSERT_TRUE(emitter.EmitOnce().ok());
  std::string datagram = agent.Receive();
  ASSERT_FALSE(datagram.empty()) << "no datagram within 5 s";
  EXPECT_THAT(datagram, HasSubstr("bulkhead.queue_latency_seconds:0.5|g|#env:test,queue:push"));
  // Computed at each emission: nobody pushed the new value.
  latency = 61;
  ASSERT_TRUE(emitter.EmitOnce().ok());
  datagram = agent.Receive();
  EXPECT_THAT(datagram, HasSubstr("bulkhead.queue_latency_seconds:61|g|#env:test,queue:push"));
  EXPECT_EQ(emitter.stats().emissions, 2u);
  EXPECT_EQ(emitter.stats().datagrams_sent, 2u);
  EXPECT_EQ(emitter.stats().datagrams_dropped, 0u);
}

TEST(StatsdEmitterTest, SplitsLargeEmissionsIntoDatagramsUnderTheLimit) {
  UdpReceiver agent;
  Registry registry;
  GaugeFamily* g = *registry.AddGauge("bulkhead_queue_size", "S.", {"queue"});
  for (int i = 0; i < 200; ++i) g->WithLabels({"queue" + std::to_string(i)}).Set(i);
  StatsdConfig config = Config(agent.address());
  config.max_datagram_bytes = 512;
  StatsdEmitter emitter(registry, config);
  ASSERT_TRUE(emitter.Open().ok());
  ASSERT_TRUE(emitter.EmitOnce().ok());
  uint64_t sent = emitter.stats().datagrams_sent;
  ASSERT_GT(sent, 1u);
  size_t lines = 0;
  for (uint64_t i = 0; i < sent; ++i) {
    std::string d = agent.Receive();
    ASSERT_FALSE(d.empty()) << "datagram " << i << " of " << sent << " not received within 5 s";
    EXPECT_LE(d.size(), 512u);
    lines += static_cast<size_t>(std::count(d.begin(), d.end(), '\n')) + 1;
  }
  // 200 gauges, plus the emitter's own two counters.
  EXPECT_EQ(lines, 202u);
}

TEST(StatsdEmitterTest, UnreachableAgentIsCountedAsDropsNotErrors) {
  UdpReceiver gone;
  std::string address = gone.address();
  gone.Close();  // nobody listens: the kernel answers with ICMP port unreachable
  Registry registry;
  (*registry.AddGauge("bulkhead_working_jobs", "W."))->Get().Set(1);
  StatsdEmitter emitter(registry, Config(address));
  ASSERT_TRUE(emitter.Open().ok());
  // The ICMP error of one send fails the next one (ECONNREFUSED); bounded number of tries.
  int emissions = 0;
  while (emitter.stats().datagrams_dropped == 0 && emissions < 1000) {
    ASSERT_TRUE(emitter.EmitOnce().ok()) << "a drop is not an error";
    ++emissions;
  }
  StatsdEmitter::Stats s = emitter.stats();
  EXPECT_GE(s.datagrams_dropped, 1u) << "no send failed in " << emissions << " emissions";
  EXPECT_EQ(s.datagrams_sent + s.datagrams_dropped, static_cast<uint64_t>(emissions));
  // The drop is visible on /metrics too.
  bool exported = false;
  for (const FamilySnapshot& f : registry.Collect()) {
    if (f.name == metric_names::kStatsdDatagramsDroppedTotal) {
      exported = f.samples.size() == 1 && f.samples[0].value >= 1;
    }
  }
  EXPECT_TRUE(exported);
}

TEST(StatsdEmitterTest, BackgroundThreadEmitsOnTheIntervalAndStopsPromptly) {
  UdpReceiver agent;
  Registry registry;
  (*registry.AddCounter("bulkhead_jobs_processed_total", "P."))->Get().Increment(3);
  StatsdEmitter emitter(registry, Config(agent.address()));
  ASSERT_TRUE(emitter.Start().ok());
  EXPECT_EQ(emitter.Start().code(), StatusCode::kFailedPrecondition);
  std::string first = agent.Receive();
  ASSERT_FALSE(first.empty()) << "the emitter thread sent nothing within 5 s";
  EXPECT_THAT(first, HasSubstr("bulkhead.jobs_processed_total:3|c|#env:test"));
  std::string second = agent.Receive();
  ASSERT_FALSE(second.empty()) << "no second emission within 5 s";
  EXPECT_THAT(second, HasSubstr("bulkhead.jobs_processed_total:0|c|#env:test"));
  emitter.Stop();
  emitter.Stop();  // idempotent
  EXPECT_GE(emitter.stats().emissions, 2u);
}

TEST(StatsdEmitterTest, EmitBeforeOpenFails) {
  Registry registry;
  StatsdEmitter emitter(registry, Config("127.0.0.1:8125"));
  EXPECT_EQ(emitter.EmitOnce().code(), StatusCode::kFailedPrecondition);
}

TEST(StatsdEmitterTest, ValidatesConfig) {
  StatsdConfig c = Config("127.0.0.1:8125");
  EXPECT_TRUE(ValidateStatsdConfig(c).ok());
  c.flavor = StatsdFlavor::kPlain;
  EXPECT_THAT(ValidateStatsdConfig(c).message(), HasSubstr("dogstatsd"));
  c.tags.clear();
  EXPECT_TRUE(ValidateStatsdConfig(c).ok());
  for (const char* bad : {"", "localhost", "localhost:0", "localhost:70000", ":8125", "a:b:c",
                          "[::1]8125", "host:12x"}) {
    c.address = bad;
    EXPECT_EQ(ValidateStatsdConfig(c).code(), StatusCode::kInvalidArgument) << bad;
  }
  c.address = "[::1]:8125";
  EXPECT_TRUE(ValidateStatsdConfig(c).ok());
  c.address = "127.0.0.1:8125";
  c.interval = Duration::zero();
  EXPECT_EQ(ValidateStatsdConfig(c).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulkhead
