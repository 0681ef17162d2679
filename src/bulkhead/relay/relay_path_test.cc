#include "bulkhead/relay/relay_path.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(RelayPathTest, CompatibleApnsPaths) {
  auto t = ParseRelayPath("/relay-to/production/0a1B2c/acct/42");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->service, RelayService::kApns);
  EXPECT_TRUE(t->production);
  EXPECT_EQ(t->app, "");
  EXPECT_EQ(t->token, "0a1B2c");
  EXPECT_EQ(t->extra, "acct/42");
  t = ParseRelayPath("/relay-to/development/abcdef");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->production);
  EXPECT_EQ(t->extra, "");
  t = ParseRelayPath("/relay-to/development/abcdef/");  // Go's {extra...} matches the empty rest
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->extra, "");
}

TEST(RelayPathTest, CompatibleFcmPathAndAppSegment) {
  auto t = ParseRelayPath("/relay-to/fcm/dGVzdA:APA91b-x_y/extra%2Fpart");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->service, RelayService::kFcm);
  EXPECT_EQ(t->token, "dGVzdA:APA91b-x_y");
  EXPECT_EQ(t->extra, "extra/part");
  t = ParseRelayPath("/relay-to/ivory/production/00ff");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->app, "ivory");
  EXPECT_EQ(t->token, "00ff");
  t = ParseRelayPath("/relay-to/tusky/fcm/tok");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->app, "tusky");
  EXPECT_EQ(t->service, RelayService::kFcm);
}

TEST(RelayPathTest, RefusalsNameTheProblem) {
  EXPECT_EQ(ParseRelayPath("/other").status().code(), StatusCode::kNotFound);
  auto t = ParseRelayPath("/relay-to/staging/abc");
  EXPECT_NE(t.status().message().find("unknown environment \"staging\""), std::string::npos);
  t = ParseRelayPath("/relay-to/production/");
  EXPECT_NE(t.status().message().find("missing"), std::string::npos);
  t = ParseRelayPath("/relay-to/production/xyz");
  EXPECT_NE(t.status().message().find("hexadecimal"), std::string::npos);
  t = ParseRelayPath("/relay-to/fcm/a%2");
  EXPECT_FALSE(t.ok());
  t = ParseRelayPath("/relay-to/fcm/a b");
  EXPECT_FALSE(t.ok());
  t = ParseRelayPath("/relay-to/production/" + std::string(201, 'a'));
  EXPECT_FALSE(t.ok());
}

}  // namespace
}  // namespace bulkhead
