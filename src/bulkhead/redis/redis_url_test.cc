#include "bulkhead/redis/redis_url.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(RedisUrlTest, PlainWithDefaults) {
  Result<RedisUrl> url = ParseRedisUrl("redis://localhost");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->scheme, RedisUrl::Scheme::kRedis);
  ASSERT_EQ(url->endpoints.size(), 1u);
  EXPECT_EQ(url->endpoints[0], (RedisEndpoint{"localhost", 6379}));
  EXPECT_EQ(url->db, 0);
  EXPECT_TRUE(url->password.empty());
  EXPECT_FALSE(url->tls());
  EXPECT_EQ(url->Redacted(), "redis://localhost:6379/0");
}

TEST(RedisUrlTest, PasswordPortAndDb) {
  Result<RedisUrl> url = ParseRedisUrl("redis://:s3cret@10.0.0.5:6380/3");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->endpoints[0], (RedisEndpoint{"10.0.0.5", 6380}));
  EXPECT_EQ(url->password, "s3cret");
  EXPECT_TRUE(url->username.empty());
  EXPECT_EQ(url->db, 3);
  EXPECT_EQ(url->Redacted(), "redis://:***@10.0.0.5:6380/3");
}

TEST(RedisUrlTest, AclUserAndEscapedPassword) {
  Result<RedisUrl> url = ParseRedisUrl("rediss://bulkhead:p%40ss%2Fw@redis.example:6390");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_TRUE(url->tls());
  EXPECT_EQ(url->username, "bulkhead");
  EXPECT_EQ(url->password, "p@ss/w");
  EXPECT_EQ(url->Redacted(), "rediss://bulkhead:***@redis.example:6390/0");
}

TEST(RedisUrlTest, PasswordWithoutColon) {
  Result<RedisUrl> url = ParseRedisUrl("redis://s3cret@host");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->password, "s3cret");
  EXPECT_TRUE(url->username.empty());
}

TEST(RedisUrlTest, Ipv6Host) {
  Result<RedisUrl> url = ParseRedisUrl("redis://[::1]:7000");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->endpoints[0], (RedisEndpoint{"::1", 7000}));
  EXPECT_EQ(url->endpoints[0].ToString(), "[::1]:7000");
}

TEST(RedisUrlTest, SentinelHostsMasterAndDb) {
  Result<RedisUrl> url = ParseRedisUrl("redis-sentinel://:pw@s1:26380,s2,[::1]:26381/mymaster/2");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->scheme, RedisUrl::Scheme::kSentinel);
  ASSERT_EQ(url->endpoints.size(), 3u);
  EXPECT_EQ(url->endpoints[0], (RedisEndpoint{"s1", 26380}));
  EXPECT_EQ(url->endpoints[1], (RedisEndpoint{"s2", 26379}));
  EXPECT_EQ(url->endpoints[2], (RedisEndpoint{"::1", 26381}));
  EXPECT_EQ(url->master_name, "mymaster");
  EXPECT_EQ(url->db, 2);
  EXPECT_EQ(url->Redacted(), "redis-sentinel://:***@s1:26380,s2:26379,[::1]:26381/mymaster/2");
}

struct BadUrl {
  const char* url;
  const char* message_part;
};

class RedisUrlErrorTest : public ::testing::TestWithParam<BadUrl> {};

TEST_P(RedisUrlErrorTest, NamesTheProblemAndNeverThePassword) {
  Result<RedisUrl> url = ParseRedisUrl(GetParam().url);
  ASSERT_FALSE(url.ok()) << GetParam().url;
  EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(url.status().message().find(GetParam().message_part), std::string::npos)
      << url.status().message();
  EXPECT_EQ(url.status().message().find("hunter2"), std::string::npos) << url.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, RedisUrlErrorTest,
    ::testing::Values(BadUrl{"localhost:6379", "expected redis://"},
                      BadUrl{":hunter2@localhost:6379", "(redacted)"},
                      BadUrl{"http://:hunter2@host", "in 'http'"},
                      BadUrl{"redis://:hunter2@", "missing host"},
                      BadUrl{"redis://:hunter2@host:0",
                             "port must be a number in 1..65535 in 'host:0'"},
                      BadUrl{"redis://host:99999", "in 'host:99999'"},
                      BadUrl{"redis://host:abc", "in 'host:abc'"},
                      BadUrl{"redis://:hunter2@host/x", "db must be a non-negative number in 'x'"},
                      BadUrl{"redis://host/-1", "in '-1'"},
                      BadUrl{"redis://a,b", "only allowed in redis-sentinel:// URLs in 'b:6379'"},
                      BadUrl{"redis-sentinel://:hunter2@s1,s2", "needs the master name"},
                      BadUrl{"redis-sentinel://s1//", "needs the master name"},
                      BadUrl{"redis-sentinel://s1/m/zz", "in 'zz'"},
                      BadUrl{"redis://[::1:6379", "unterminated IPv6 address"},
                      BadUrl{"redis://:hunter2%zz@host", "malformed %-escape in the password"},
                      BadUrl{"redis://:@host:1,", "empty host"}));

}  // namespace
}  // namespace bulkhead
