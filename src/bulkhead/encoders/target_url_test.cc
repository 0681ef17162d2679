#include "bulkhead/encoders/target_url.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(TargetUrlTest, ParsesPartsAndDefaults) {
  Result<TargetUrl> u = ParseTargetUrl("HTTPS://Push.Example.COM/wpush/v2/abc?x=1&y=%20");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "push.example.com");
  EXPECT_EQ(u->port, 443);
  EXPECT_FALSE(u->explicit_port);
  EXPECT_EQ(u->target, "/wpush/v2/abc?x=1&y=%20");
  EXPECT_EQ(u->Authority(), "push.example.com");
  EXPECT_EQ(u->Origin(), "https://push.example.com");
}

TEST(TargetUrlTest, PortsAndOrigins) {
  auto a = ParseTargetUrl("https://h.example:443/x");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->Origin(), "https://h.example");  // default port is not serialised
  auto b = ParseTargetUrl("http://localhost:8090/notify/abc");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->Origin(), "http://localhost:8090");
  EXPECT_EQ(b->Authority(), "localhost:8090");
  auto c = ParseTargetUrl("https://[::1]:8443");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "[::1]");
  EXPECT_EQ(c->target, "/");
  EXPECT_EQ(c->Origin(), "https://[::1]:8443");
  auto d = ParseTargetUrl("https://h.example?q");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->target, "/?q");
}

TEST(TargetUrlTest, RefusesWhatCannotBeADeliveryTarget) {
  for (const char* bad :
       {"", "push.example/x", "ftp://h/x", "https://", "https:///x", "https://u:p@h/x",
        "https://h:0/", "https://h:65536/", "https://h:12a/", "https://h:/", "https://h/x#frag",
        "https://h/a b", "https://h/\x01", "https://h\xc3\xa9/", "https://h_!/", "https://[::1/",
        "https://[zz]/", "https://[]/"}) {
    Result<TargetUrl> u = ParseTargetUrl(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) {
      EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_FALSE(ParseTargetUrl("https://h/" + std::string(kMaxTargetUrlLength, 'a')).ok());
}

}  // namespace
}  // namespace bulkhead
