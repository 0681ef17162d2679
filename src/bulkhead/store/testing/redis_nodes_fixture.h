// RedisNodesTest (tests only): a fixture for cases that run several RedisStores on one namespace
// of the shared redis-server, each store one node. Heartbeats every 100 ms; the reaper runs only
// when a case calls it (reap_every 1 h); the heartbeat TTL is the fixture's argument.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {

class RedisNodesTest : public ::testing::Test {
 protected:
  // `hint` names the namespace (UniqueRedisNamespace); `heartbeat_ttl`: how long a silent node
  // stays alive.
  RedisNodesTest(std::string hint, std::chrono::milliseconds heartbeat_ttl)
      : hint_(std::move(hint)), heartbeat_ttl_(heartbeat_ttl) {}

  void SetUp() override {
    std::string error;
    server_ = SharedRedis(&error);
    ASSERT_NE(server_, nullptr) << error;
    namespace_ = UniqueRedisNamespace(hint_);
  }

  // A store of the namespace as node `node_id`, open; nullptr (and a test failure) when Open fails.
  std::unique_ptr<RedisStore> OpenNode(const std::string& node_id) {
    RedisStoreOptions o;
    o.url = *ParseRedisUrl(server_->url());
    o.redis_namespace = namespace_;
    o.node_id = node_id;
    o.heartbeat_every = std::chrono::milliseconds(100);
    o.heartbeat_ttl = heartbeat_ttl_;
    o.reap_every = std::chrono::hours(1);  // reaping only when a case says so
    auto store = std::make_unique<RedisStore>(loop_.io(), std::move(o));
    Status s = store->Open();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return s.ok() ? std::move(store) : nullptr;
  }

  // Calls `call` with a callback and runs the loop until it has run; its argument.
  template <typename R>
  R Await(const std::function<void(std::function<void(R)>)>& call) {
    std::optional<R> out;
    call([&](R r) { out.emplace(std::move(r)); });
    loop_.RunUntil([&] { return out.has_value(); });
    return std::move(*out);
  }

  TestLoop loop_;
  RedisServerProcess* server_ = nullptr;
  std::string namespace_;

 private:
  std::string hint_;
  std::chrono::milliseconds heartbeat_ttl_;
};

}  // namespace bulkhead
