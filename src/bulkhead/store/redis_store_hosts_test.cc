// RedisStore: what the nodes of a namespace share about delivery hosts: a host state written or
// removed through one node is announced to the others (not to itself), and a lease is held by one
// node at a time. A real redis-server (store/testing/shared_redis.h).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

class RedisStoreHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    server_ = SharedRedis(&error);
    ASSERT_NE(server_, nullptr) << error;
    ns_ = UniqueRedisNamespace("hosts");
  }
  std::unique_ptr<RedisStore> OpenNode(const std::string& id) {
    RedisStoreOptions o;
    o.url = *ParseRedisUrl(server_->url());
    o.redis_namespace = ns_;
    o.node_id = id;
    auto store = std::make_unique<RedisStore>(loop_.io(), std::move(o));
    Status s = store->Open();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return store;
  }
  bool Lease(Store& store, const std::string& name) {
    std::optional<Result<bool>> out;
    store.cluster().TryLease(name, 10s, [&](Result<bool> r) { out.emplace(std::move(r)); });
    loop_.RunUntil([&] { return out.has_value(); });
    EXPECT_TRUE(out->ok()) << out->status().ToString();
    return out->ok() && **out;
  }
  void Wait(Store& store, const std::function<void(Store::Done)>& call) {
    std::optional<Status> out;
    call([&](Status s) { out = s; });
    loop_.RunUntil([&] { return out.has_value(); });
    EXPECT_TRUE(out->ok()) << out->ToString();
  }

  TestLoop loop_;
  RedisServerProcess* server_ = nullptr;
  std::string ns_;
};

TEST_F(RedisStoreHostsTest, AHostStateChangeIsAnnouncedToTheOtherNodes) {
  auto a = OpenNode("node-a");
  auto b = OpenNode("node-b");
  std::vector<std::string> heard_a, heard_b;
  a->cluster().SetHostStateHandler([&](const std::string& host) { heard_a.push_back(host); });
  b->cluster().SetHostStateHandler([&](const std::string& host) { heard_b.push_back(host); });
  HostStateRecord record;
  record.host = "dead.example:443";
  record.breaker_open_until_us = 1'700'000'030'000'000;
  Wait(*a, [&](Store::Done done) { a->host_states().Put(record, done); });
  loop_.RunUntil([&] { return heard_b.size() == 1; });
  Wait(*a, [&](Store::Done done) { a->host_states().Remove(record.host, done); });
  loop_.RunUntil([&] { return heard_b.size() == 2; });
  EXPECT_EQ(heard_b, (std::vector<std::string>{"dead.example:443", "dead.example:443"}));
  // B's own change reaches A; once it has, A's own two would have too (one channel, in order).
  Wait(*b, [&](Store::Done done) { b->host_states().Remove("other.example", done); });
  loop_.RunUntil([&] { return !heard_a.empty(); });
  EXPECT_EQ(heard_a, std::vector<std::string>{"other.example"});
  a->Close();
  b->Close();
}

TEST_F(RedisStoreHostsTest, ALeaseIsHeldByOneNodeAtATime) {
  auto a = OpenNode("node-a");
  auto b = OpenNode("node-b");
  EXPECT_TRUE(Lease(*a, "probe:dead.example"));
  EXPECT_FALSE(Lease(*b, "probe:dead.example"));
  EXPECT_TRUE(Lease(*a, "probe:dead.example")) << "the holder renews it";
  EXPECT_TRUE(Lease(*b, "probe:other.example")) << "leases are per name";
  b->cluster().ReleaseLease("probe:dead.example");  // not B's: nothing happens
  EXPECT_FALSE(Lease(*b, "probe:dead.example"));
  a->cluster().ReleaseLease("probe:dead.example");
  EXPECT_TRUE(Lease(*a, "probe:third.example")) << "answered after the release, on A's connection";
  EXPECT_TRUE(Lease(*b, "probe:dead.example"));
  a->Close();
  b->Close();
}

}  // namespace
}  // namespace bulkhead
