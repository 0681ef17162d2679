// Queue throttling on Redis across nodes: the limit holds for every node sharing the
// namespace, a slot released through one node wakes the others, and a dead node's reaped
// reservations give their slots back. (store_test.cc runs the single-node cases on Redis too.)
#include <gtest/gtest.h>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/store/testing/redis_nodes_fixture.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

class RedisThrottleTest : public RedisNodesTest {
 protected:
  RedisThrottleTest() : RedisNodesTest("throttle", 300ms) {}
  std::string FetchT(Store& store, const std::string& wid = "w1") {
    using R = Result<std::optional<JobRecord>>;
    R r = Await<R>([&](auto cb) {
      store.throttles().Fetch({"thr", "other"}, ThrottledFetch{throttles_, wid}, now_, cb);
    });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->has_value() ? (*r)->jid : "";
  }
  bool Ack(Store& store, const std::string& jid) {
    using R = Result<std::optional<JobRecord>>;
    R r = Await<R>([&](auto cb) { store.Ack(jid, now_, cb); });
    return r.ok() && r->has_value();
  }
  size_t InUse(Store& store) {
    using R = Result<std::vector<ThrottleUse>>;
    R r = Await<R>([&](auto cb) { store.throttles().Uses(throttles_, now_, cb); });
    return r.ok() && r->size() == 1 ? (*r)[0].in_use : SIZE_MAX;
  }
  void PushN(Store& store, const std::string& queue, int n) {
    for (int i = 0; i < n; ++i) {
      std::string jid = "job-" + queue + "-" + std::to_string(1000 + i);
      ASSERT_TRUE(Await<Status>([&](auto cb) { store.Push(MakeJob(jid, queue), cb); }).ok());
    }
  }
  bool AliveKeyExists(const std::string& node) {
    auto r = BlockingRedisCommand(server_->connect_options(),
                                  {"EXISTS", "{" + namespace_ + "}:alive:" + node});
    return r.ok() && r->integer() == 1;
  }

  TimePoint now_ = FromUnixMicros(1'700'000'000'000'000);
  std::vector<QueueThrottle> throttles_{
      QueueThrottle{.queue = "thr", .limit = 2, .per_worker = false, .timeout = 60s}};
};

TEST_F(RedisThrottleTest, TheLimitHoldsAcrossNodesAndAReleaseWakesTheOthers) {
  auto a = OpenNode("node-a");
  auto b = OpenNode("node-b");
  ASSERT_TRUE(a && b);
  std::vector<std::pair<std::string, size_t>> woken_b;
  b->cluster().SetWakeHandler([&](const std::string& q, size_t n) { woken_b.emplace_back(q, n); });
  PushN(*a, "thr", 5);
  PushN(*a, "other", 1);
  EXPECT_EQ(FetchT(*a), "job-thr-1000");
  EXPECT_EQ(FetchT(*b), "job-thr-1001");
  EXPECT_EQ(FetchT(*a), "job-other-1000") << "thr is full for every node";
  EXPECT_EQ(FetchT(*b), "");
  EXPECT_EQ(InUse(*b), 2u);
  woken_b.clear();
  EXPECT_TRUE(Ack(*a, "job-thr-1000"));
  loop_.RunUntil([&] {
    return std::find(woken_b.begin(), woken_b.end(), std::make_pair(std::string("thr"), 1ul)) !=
           woken_b.end();
  });
  EXPECT_EQ(FetchT(*b), "job-thr-1002");
  EXPECT_EQ(FetchT(*a), "");
}

TEST_F(RedisThrottleTest, ADeadNodesReapedReservationsGiveTheirSlotsBack) {
  auto a = OpenNode("node-a");
  auto b = OpenNode("node-b");
  ASSERT_TRUE(a && b);
  PushN(*a, "thr", 4);
  EXPECT_EQ(FetchT(*a), "job-thr-1000");
  EXPECT_EQ(FetchT(*a), "job-thr-1001");
  EXPECT_EQ(FetchT(*b), "");
  a->AbandonForTests();
  a.reset();
  loop_.RunUntil([&] { return !AliveKeyExists("node-a"); });
  auto given_back = Await<Result<size_t>>([&](auto cb) { b->ReapDeadNodes(cb); });
  ASSERT_TRUE(given_back.ok());
  EXPECT_EQ(*given_back, 2u);
  EXPECT_EQ(InUse(*b), 0u);
  EXPECT_EQ(FetchT(*b), "job-thr-1000") << "given back to the oldest end of its queue";
}

}  // namespace
}  // namespace bulkhead
