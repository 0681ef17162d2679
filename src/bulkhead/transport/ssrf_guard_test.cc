#include "bulkhead/transport/ssrf_guard.h"

#include <gtest/gtest.h>

#include <string>

#include "bulkhead/transport/ip_address.h"

namespace bulkhead {
namespace {

IpAddress Ip(const std::string& text) {
  std::optional<IpAddress> a = IpAddress::Parse(text);
  EXPECT_TRUE(a.has_value()) << "not an address: " << text;
  return a.value_or(IpAddress::V4(0));
}

TEST(IpAddressTest, ParsesAndPrintsBothFamilies) {
  EXPECT_EQ(Ip("10.1.2.3").ToString(), "10.1.2.3");
  EXPECT_TRUE(Ip("10.1.2.3").is_v4());
  EXPECT_EQ(Ip("10.1.2.3").v4(), 0x0a010203u);
  EXPECT_EQ(Ip("::FFFF:127.0.0.1").ToString(), "::ffff:127.0.0.1");
  EXPECT_EQ(Ip("2001:db8::1").ToUriString(), "[2001:db8::1]");
  EXPECT_FALSE(IpAddress::Parse("127.1").has_value());  // only strict dotted quads
  EXPECT_FALSE(IpAddress::Parse("[::1]").has_value());
  EXPECT_FALSE(IpAddress::Parse("example.com").has_value());
  EXPECT_FALSE(IpAddress::Parse("").has_value());
}

TEST(CidrRangeTest, ContainsRespectsPrefixAndFamily) {
  CidrRange r = *CidrRange::Parse("172.16.0.0/12");
  EXPECT_TRUE(r.Contains(Ip("172.16.0.1")));
  EXPECT_TRUE(r.Contains(Ip("172.31.255.255")));
  EXPECT_FALSE(r.Contains(Ip("172.32.0.0")));
  EXPECT_FALSE(r.Contains(Ip("::ffff:172.16.0.1")));  // other family
  EXPECT_TRUE(CidrRange::Parse("fc00::/7")->Contains(Ip("fdff::1")));
  EXPECT_TRUE(CidrRange::Parse("10.0.0.1")->Contains(Ip("10.0.0.1")));
  EXPECT_FALSE(CidrRange::Parse("10.0.0.0/33").has_value());
  EXPECT_FALSE(CidrRange::Parse("10.0.0.0/x").has_value());
  EXPECT_EQ(CidrRange::Parse("fe80::/10")->ToString(), "fe80::/10");
}

SsrfPolicy OpenPolicy() {
  SsrfPolicy p;
  p.allow_private_targets = true;
  return p;
}

struct Case {
  const char* address;
  const char* range;  // expected range in the refusal; nullptr = public, allowed
};

class SsrfTableTest : public ::testing::TestWithParam<Case> {};

TEST_P(SsrfTableTest, RefusedWithoutTheSettingAndAllowedWithIt) {
  const Case& c = GetParam();
  SsrfGuard strict(SsrfPolicy{});
  SsrfGuard open(OpenPolicy());
  IpAddress a = Ip(c.address);
  Status s = strict.CheckAddress(a);
  if (c.range == nullptr) {
    EXPECT_TRUE(s.ok()) << c.address << ": " << s.ToString();
  } else {
    ASSERT_FALSE(s.ok()) << c.address << " should be refused";
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
    EXPECT_NE(s.message().find(a.ToString()), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.range), std::string::npos) << s.message();
  }
  EXPECT_TRUE(open.CheckAddress(a).ok()) << c.address;
}

INSTANTIATE_TEST_SUITE_P(
    Addresses, SsrfTableTest,
    ::testing::Values(
        // IPv4 refused
        Case{"127.0.0.1", "127.0.0.0/8"}, Case{"127.255.255.254", "127.0.0.0/8"},
        Case{"10.0.0.1", "10.0.0.0/8"}, Case{"172.16.5.4", "172.16.0.0/12"},
        Case{"172.31.255.255", "172.16.0.0/12"}, Case{"192.168.1.1", "192.168.0.0/16"},
        Case{"169.254.169.254", "169.254.0.0/16"}, Case{"100.64.0.1", "100.64.0.0/10"},
        Case{"100.127.255.255", "100.64.0.0/10"}, Case{"0.0.0.0", "0.0.0.0/8"},
        Case{"0.1.2.3", "0.0.0.0/8"}, Case{"224.0.0.1", "224.0.0.0/4"},
        Case{"239.255.255.250", "224.0.0.0/4"}, Case{"255.255.255.255", "255.255.255.255/32"},
        Case{"240.0.0.1", "240.0.0.0/4"}, Case{"192.0.0.8", "192.0.0.0/24"},
        Case{"192.0.2.10", "192.0.2.0/24"}, Case{"198.51.100.7", "198.51.100.0/24"},
        Case{"203.0.113.9", "203.0.113.0/24"}, Case{"198.18.0.1", "198.18.0.0/15"},
        Case{"198.19.255.255", "198.18.0.0/15"}, Case{"192.88.99.1", "192.88.99.0/24"},
        // IPv6 refused
        Case{"::1", "::1/128"}, Case{"::", "::/128"}, Case{"fc00::1", "fc00::/7"},
        Case{"fd12:3456::1", "fc00::/7"}, Case{"fe80::1", "fe80::/10"},
        Case{"febf::1", "fe80::/10"}, Case{"fec0::1", "fec0::/10"}, Case{"ff02::1", "ff00::/8"},
        Case{"2001:db8::1", "2001:db8::/32"}, Case{"2001:0:4136:e378::1", "2001::/32"},
        Case{"100::1", "100::/64"}, Case{"3fff::1", "3fff::/20"},
        Case{"64:ff9b:1::1", "64:ff9b:1::/48"}, Case{"2001:10::1", "2001:10::/28"},
        // IPv6 forms carrying a refused IPv4 address
        Case{"::ffff:127.0.0.1", "127.0.0.0/8"}, Case{"::ffff:10.1.1.1", "10.0.0.0/8"},
        Case{"::ffff:169.254.169.254", "169.254.0.0/16"}, Case{"::ffff:0.0.0.0", "0.0.0.0/8"},
        Case{"64:ff9b::127.0.0.1", "127.0.0.0/8"}, Case{"64:ff9b::a00:1", "10.0.0.0/8"},
        Case{"2002:7f00:1::1", "127.0.0.0/8"}, Case{"2002:c0a8:101::", "192.168.0.0/16"},
        Case{"::127.0.0.1", "::/96"}, Case{"::8.8.8.8", "::/96"},
        Case{"::ffff:0:10.0.0.1", "10.0.0.0/8"},
        // public, allowed
        Case{"8.8.8.8", nullptr}, Case{"1.1.1.1", nullptr}, Case{"172.32.0.1", nullptr},
        Case{"100.128.0.1", nullptr}, Case{"192.169.0.1", nullptr},
        Case{"2606:4700::1111", nullptr}, Case{"2a00:1450:4001::1", nullptr},
        Case{"::ffff:8.8.8.8", nullptr}, Case{"64:ff9b::8.8.8.8", nullptr},
        Case{"2002:808:808::1", nullptr}));

TEST(SsrfGuardTest, MessageNamesAddressRangeAndKind) {
  SsrfGuard guard(SsrfPolicy{});
  Status s = guard.CheckAddress(Ip("::ffff:127.0.0.1"));
  EXPECT_EQ(s.message(),
            "address ::ffff:127.0.0.1 is in 127.0.0.0/8 (IPv4-mapped ::ffff:0.0.0.0/96 carrying "
            "127.0.0.1, loopback)");
  EXPECT_EQ(guard.CheckAddress(Ip("10.2.3.4")).message(),
            "address 10.2.3.4 is in 10.0.0.0/8 (private (RFC 1918))");
}

TEST(SsrfGuardTest, AllowedRangesAreExceptions) {
  SsrfPolicy policy;
  policy.allowed_ranges = {*CidrRange::Parse("10.5.0.0/16")};
  SsrfGuard guard(policy);
  EXPECT_TRUE(guard.CheckAddress(Ip("10.5.1.1")).ok());
  EXPECT_TRUE(guard.CheckAddress(Ip("::ffff:10.5.1.1")).ok());
  EXPECT_FALSE(guard.CheckAddress(Ip("10.6.1.1")).ok());
  EXPECT_FALSE(guard.CheckAddress(Ip("127.0.0.1")).ok());
}

TEST(SsrfGuardTest, SchemesHttpsOnlyUnlessPrivateTargetsAllowed) {
  SsrfGuard strict(SsrfPolicy{});
  SsrfGuard open(OpenPolicy());
  EXPECT_TRUE(strict.CheckScheme("https").ok());
  EXPECT_TRUE(strict.CheckScheme("HTTPS").ok());
  EXPECT_FALSE(strict.CheckScheme("http").ok());
  EXPECT_FALSE(strict.CheckScheme("ftp").ok());
  EXPECT_TRUE(open.CheckScheme("http").ok());
  EXPECT_FALSE(open.CheckScheme("gopher").ok());
  EXPECT_STREQ(strict.CurlProtocols(), "https");
  EXPECT_STREQ(open.CurlProtocols(), "http,https");
}

}  // namespace
}  // namespace bulkhead
