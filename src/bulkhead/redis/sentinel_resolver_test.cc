// SentinelResolver against real processes: one primary, one replica and one redis-sentinel.
#include "bulkhead/redis/sentinel_resolver.h"

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <optional>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/redis/testing/run_until.h"

namespace bulkhead {
namespace {

using std::chrono::seconds;

// The primary has a replica in sync and the Sentinel knows both.
class SentinelResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto primary = RedisServerProcess::Start();
    ASSERT_TRUE(primary.ok()) << primary.status().ToString();
    primary_ = std::move(*primary);
    auto replica = RedisServerProcess::Start({.replica_of = primary_->endpoint()});
    ASSERT_TRUE(replica.ok()) << replica.status().ToString();
    replica_ = std::move(*replica);
    Status synced = WaitFor(
        [&] {
          Result<RedisReply> info =
              BlockingRedisCommand(replica_->connect_options(), {"INFO", "replication"});
          return info.ok() && info->str().find("master_link_status:up") != std::string::npos;
        },
        std::chrono::seconds(20), "the replica syncs with the primary");
    ASSERT_TRUE(synced.ok()) << synced.ToString() << "\n" << replica_->LogTail();
    auto sentinel = RedisServerProcess::StartSentinel({.primary = primary_->endpoint()});
    ASSERT_TRUE(sentinel.ok()) << sentinel.status().ToString();
    sentinel_ = std::move(*sentinel);
    Status knows = WaitFor(
        [&] {
          Result<RedisReply> r = BlockingRedisCommand(sentinel_->connect_options(),
                                                      {"SENTINEL", "REPLICAS", "mymaster"});
          return r.ok() && r->is_array() && !r->elements().empty();
        },
        std::chrono::seconds(30), "the Sentinel discovers the replica");
    ASSERT_TRUE(knows.ok()) << knows.ToString() << "\n" << sentinel_->LogTail();
  }

  RedisUrl Url(const std::vector<RedisEndpoint>& sentinels, const std::string& master) {
    std::string text = "redis-sentinel://";
    for (size_t i = 0; i < sentinels.size(); ++i) {
      text += (i > 0 ? "," : "") + sentinels[i].ToString();
    }
    Result<RedisUrl> url = ParseRedisUrl(text + "/" + master);
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    return *url;
  }

  Result<RedisEndpoint> Resolve(SentinelResolver& resolver) {
    std::optional<Result<RedisEndpoint>> result;
    resolver.Resolve([&](Result<RedisEndpoint> r) { result = std::move(r); });
    EXPECT_FALSE(result.has_value());
    EXPECT_TRUE(RunUntil(
        io_, [&] { return result.has_value(); }, "Resolve", seconds(20)));
    if (!result) return Status::Internal("no answer");
    return std::move(*result);
  }

  uint16_t ClosedPort() {
    boost::asio::ip::tcp::acceptor probe(io_, {boost::asio::ip::address_v4::loopback(), 0});
    return probe.local_endpoint().port();
  }

  boost::asio::io_context io_;
  std::unique_ptr<RedisServerProcess> primary_;
  std::unique_ptr<RedisServerProcess> replica_;
  std::unique_ptr<RedisServerProcess> sentinel_;
};

TEST_F(SentinelResolverTest, FindsThePrimaryAndFollowsAFailover) {
  SentinelResolver resolver(io_, Url({sentinel_->endpoint()}, "mymaster"));
  Result<RedisEndpoint> first = Resolve(resolver);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, primary_->endpoint());

  // The Sentinel may not trust the replica yet (NOGOODSLAVE until it has fresh INFO from it).
  std::string refusal;
  Status started = WaitFor(
      [&] {
        Result<RedisReply> r = BlockingRedisCommand(sentinel_->connect_options(),
                                                    {"SENTINEL", "FAILOVER", "mymaster"});
        refusal = r.ok() ? r->ToString() : r.status().message();
        return r.ok() && r->Is("OK");
      },
      std::chrono::seconds(30), "SENTINEL FAILOVER starts");
  ASSERT_TRUE(started.ok()) << started.ToString() << "; last: " << refusal;
  // The resolver answers the new primary once the Sentinel switched and the replica is promoted.
  std::string last;
  Status moved = WaitFor(
      [&] {
        Result<RedisEndpoint> now = Resolve(resolver);
        last = now.ok() ? now->ToString() : now.status().message();
        return now.ok() && *now == replica_->endpoint();
      },
      std::chrono::seconds(30), "the resolver names the promoted replica");
  ASSERT_TRUE(moved.ok()) << moved.ToString() << "; last answer: " << last << "\n"
                          << sentinel_->LogTail();
}

TEST_F(SentinelResolverTest, SkipsSentinelsThatDoNotAnswer) {
  RedisEndpoint dead{"127.0.0.1", ClosedPort()};
  // Accepts TCP and never answers.
  boost::asio::ip::tcp::acceptor silent(io_, {boost::asio::ip::address_v4::loopback(), 0});
  RedisEndpoint mute{"127.0.0.1", silent.local_endpoint().port()};
  SentinelResolver resolver(io_, Url({dead, mute, sentinel_->endpoint()}, "mymaster"),
                            std::chrono::milliseconds(300));
  Result<RedisEndpoint> r = Resolve(resolver);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, primary_->endpoint());
}

TEST_F(SentinelResolverTest, ErrorNamesEverySentinelAndWhy) {
  RedisEndpoint dead{"127.0.0.1", ClosedPort()};
  SentinelResolver resolver(io_, Url({dead, sentinel_->endpoint()}, "nosuchmaster"));
  Result<RedisEndpoint> r = Resolve(resolver);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  std::string m = r.status().message();
  EXPECT_NE(m.find("no Sentinel named a usable primary for 'nosuchmaster'"), std::string::npos)
      << m;
  EXPECT_NE(m.find(dead.ToString() + ": cannot connect"), std::string::npos) << m;
  EXPECT_NE(m.find(sentinel_->endpoint().ToString() + ": does not know master 'nosuchmaster'"),
            std::string::npos)
      << m;
}

TEST_F(SentinelResolverTest, AReplicaIsNotAcceptedAsPrimary) {
  // The primary turned into a replica by hand: the Sentinel keeps naming it until its next INFO
  // (up to 10 s later), and the resolver must refuse an address that is not a master.
  Result<RedisReply> demote = BlockingRedisCommand(
      primary_->connect_options(),
      {"REPLICAOF", replica_->endpoint().host, std::to_string(replica_->port())});
  ASSERT_TRUE(demote.ok()) << demote.status().ToString();
  SentinelResolver resolver(io_, Url({sentinel_->endpoint()}, "mymaster"));
  Result<RedisEndpoint> r = Resolve(resolver);
  if (r.ok()) GTEST_SKIP() << "the Sentinel reacted before the check; nothing to verify";
  EXPECT_NE(r.status().message().find("names " + primary_->endpoint().ToString() +
                                      ", which reports role slave"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace bulkhead
