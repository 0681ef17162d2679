// Queue throttling through the whole server: many worker connections on a throttled queue
// never hold more of its jobs than the limit, and a worker listing a full throttled queue first
// gets the next queue's jobs. A Server on loopback port 0 with the memory store (inline and
// deferred), driven over real sockets.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "bulkhead/server/server.h"
#include "bulkhead/server/testing/fwp_test_connection.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

using Worker = testing::FwpTestConnection;

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
