// Queue throttling through the whole server (#13): many worker connections on a throttled queue
// never hold more of its jobs than the limit, and a worker listing a full throttled queue first
// gets the next queue's jobs. A Server on loopback port 0 with the memory store (inline and
// deferred), driven over real sockets.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "bulkhead/server/server.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

// One Faktory connection, one command at a time (a worker's).
class Worker {
 public:
  explicit Worker(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Worker() { ::close(fd_); }
  // Reads the greeting and says HELLO with `wid`; the reply ("+OK").
  std::string Hello(const std::string& wid) {
    if (!connected_) return "(not connected)";
    Read();
    return Call(R"(HELLO {"v":2,"hostname":"test","pid":1,"wid":")" + wid + R"("})");
  }
  std::string Call(const std::string& line) {
    std::string out = line + "\r\n";
    ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
    return Read();
  }
  // FETCH: the job's jid, "" for none ($-1), or the error line.
  std::string Fetch(const std::string& queues) {
    std::string head = Call("FETCH " + queues);
    if (head == "$-1") return "";
    if (head.empty() || head[0] != '$') return "(error) " + head;
    auto job = nlohmann::json::parse(Read(), nullptr, false);
    return job.is_object() ? job.value("jid", "(no jid)") : "(not json)";
  }
  // The next reply line.
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

class ThrottleServerTest : public ::testing::TestWithParam<bool> {
 protected:
  void Start(int concurrency) {
    Config config;
    config.listen = "127.0.0.1:0";
    config.http = "127.0.0.1:0";
    config.store = "memory:";
    config.fetch_block_ms = 200;
    // The workers send no BEAT: under the sanitizers the run outlasts the default 60 s after
    // which a silent worker is dropped (and its connection closed).
    config.worker_timeout_seconds = 3600;
    config.data_dir = (std::filesystem::temp_directory_path() /
                       ("bulkhead_throttle_server_test_" + std::to_string(::getpid())))
                          .string();
    config.throttles["thr"] = ThrottleConfig{.limit = concurrency, .timeout_seconds = 600};
    ServerTestHooks hooks;
    if (GetParam()) {
      hooks.wrap_store = [](std::unique_ptr<Store> inner, Store::Poster post) {
        return std::make_unique<DeferredStore>(std::move(inner), std::move(post));
      };
    }
    server_ = std::make_unique<Server>(std::move(config), SystemClock::Instance(), hooks);
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("bulkhead_throttle_server_test_" + std::to_string(::getpid())));
  }
  void PushJobs(const std::string& queue, int n) {
    Worker producer(server_->fwp_port());
    ASSERT_EQ(producer.Hello("producer"), "+OK");
    for (int i = 0; i < n; ++i) {
      std::string reply =
          producer.Call(R"(PUSH {"jid":")" + queue + "-" + std::to_string(10000 + i) +
                        R"(","jobtype":"t","args":[],"queue":")" + queue + R"("})");
      ASSERT_EQ(reply, "+OK");
    }
  }

  std::unique_ptr<Server> server_;
  std::thread thread_;
};

INSTANTIATE_TEST_SUITE_P(StoreTimings, ThrottleServerTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

TEST_P(ThrottleServerTest, TwentyWorkersNeverHoldMoreThanTheLimit) {
  constexpr int kLimit = 3, kWorkers = 20, kJobs = 3000;
  Start(kLimit);
  PushJobs("thr", kJobs);
  std::atomic<int> held{0}, max_held{0}, acked{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      Worker worker(server_->fwp_port());
      if (worker.Hello("wid-" + std::to_string(w)) != "+OK") {
        failed = true;
        return;
      }
      while (acked.load() < kJobs && !failed) {
        std::string jid = worker.Fetch("thr");
        if (jid.empty()) continue;  // full or drained: FETCH again
        if (jid.starts_with("(")) {
          ADD_FAILURE() << "FETCH: " << jid;
          failed = true;
          return;
        }
        // Held from the FETCH reply until just before the ACK is sent: never longer than the
        // server holds the slot.
        int now_held = held.fetch_add(1) + 1;
        for (int seen = max_held.load(); now_held > seen;) {
          if (max_held.compare_exchange_weak(seen, now_held)) break;
        }
        for (int i = 0; i < 20; ++i) std::this_thread::yield();  // some "work"
        held.fetch_sub(1);
        if (worker.Call(R"(ACK {"jid":")" + jid + R"("})") != "+OK") {
          ADD_FAILURE() << "ACK of " << jid << " failed";
          failed = true;
          return;
        }
        acked.fetch_add(1);
      }
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_FALSE(failed);
  EXPECT_EQ(acked.load(), kJobs);
  EXPECT_LE(max_held.load(), kLimit);
  EXPECT_EQ(max_held.load(), kLimit) << "the workers reached the limit at some point";
}

TEST_P(ThrottleServerTest, AWorkerListingAFullThrottledQueueGetsTheNextQueuesJobs) {
  Start(2);
  PushJobs("thr", 3);
  PushJobs("other", 2);
  Worker a(server_->fwp_port()), b(server_->fwp_port()), c(server_->fwp_port());
  ASSERT_EQ(a.Hello("wid-a"), "+OK");
  ASSERT_EQ(b.Hello("wid-b"), "+OK");
  ASSERT_EQ(c.Hello("wid-c"), "+OK");
  EXPECT_EQ(a.Fetch("thr other"), "thr-10000");
  EXPECT_EQ(b.Fetch("thr other"), "thr-10001");
  EXPECT_EQ(c.Fetch("thr other"), "other-10000") << "thr is full";
  EXPECT_EQ(c.Fetch("thr other"), "other-10001");
  EXPECT_EQ(c.Fetch("thr"), "") << "thr alone: nothing within the block time";
  EXPECT_EQ(a.Call(R"(ACK {"jid":"thr-10000"})"), "+OK");
  EXPECT_EQ(c.Fetch("thr other"), "thr-10002") << "the ACK gave the slot back";
  std::string info = c.Call("INFO");
  auto doc = nlohmann::json::parse(c.Read(), nullptr, false);
  ASSERT_TRUE(doc.is_object()) << info;
  EXPECT_EQ(doc["throttles"]["thr"],
            nlohmann::json::parse(R"({"concurrency":2,"timeout":600,"in_use":2})"));
}

}  // namespace
}  // namespace bulkhead
