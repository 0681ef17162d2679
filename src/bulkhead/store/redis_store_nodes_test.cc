// The live node count of the Redis store (the delivery caps are shared by it): each store is
// one node; the count is learned at Open and at each heartbeat from the registered nodes whose
// alive key exists, and the node count handler hears every change.
#include <gtest/gtest.h>

#include <vector>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/testing/redis_nodes_fixture.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

class RedisNodeCountTest : public RedisNodesTest {
 protected:
  RedisNodeCountTest() : RedisNodesTest("nodes", 300ms) {}
};

TEST_F(RedisNodeCountTest, TwoStoresCountTwoUntilOneStopsHeartbeating) {
  auto a = OpenNode("node-a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->cluster().live_nodes(), 1u) << "alone at Open";
  std::vector<size_t> heard;
  a->cluster().SetNodeCountHandler([&heard](size_t n) { heard.push_back(n); });

  auto b = OpenNode("node-b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->cluster().live_nodes(), 2u) << "B's Open counts A";
  loop_.RunUntil([&] { return a->cluster().live_nodes() == 2; });
  EXPECT_EQ(heard, std::vector<size_t>{2}) << "A's next heartbeat hears B";

  b->PauseHeartbeatsForTests(true);  // B goes silent past its TTL: not alive any more
  loop_.RunUntil([&] { return a->cluster().live_nodes() == 1; });
  EXPECT_EQ(heard, (std::vector<size_t>{2, 1}));

  b->PauseHeartbeatsForTests(false);  // B comes back
  loop_.RunUntil([&] { return a->cluster().live_nodes() == 2; });

  b->Close();  // a graceful stop deletes B's alive key at once
  b.reset();
  loop_.RunUntil([&] { return a->cluster().live_nodes() == 1; });
  EXPECT_EQ(heard, (std::vector<size_t>{2, 1, 2, 1}));
  a->cluster().SetNodeCountHandler(nullptr);
}

}  // namespace
}  // namespace bulkhead
