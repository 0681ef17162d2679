#include "bulkhead/config/relay_config.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

Result<RelaySettings> ReadRelay(const std::string& text) {
  toml::table root = toml::parse(text);
  const toml::node* relay = root.get("relay");
  if (!relay) return RelaySettings{};
  return ReadRelaySettings(*relay);
}

std::string RelayError(const std::string& text) {
  auto r = ReadRelay(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(RelayConfigTest, ApnsAndFcmApps) {
  auto r = ReadRelay(R"(
[[relay.apns]]
  name = "toot"
  topic = "cx.c3.toot"
  team_id = "T"
  key_id = "K"
  key_file = "/k.p8"
  default = true
  rate_per_second = 5
[[relay.apns]]
  name = "ivory"
  topic = "com.tapbots.Ivory"
  certificate_file = "/c.p12"
  production_url = "https://127.0.0.1:1"
[[relay.fcm]]
  name = "tusky"
  service_account_file = "/sa.json"
  token_per_minute = 0
)");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->apns.size(), 2u);
  EXPECT_EQ(r->apns[0].name, "toot");
  EXPECT_TRUE(r->apns[0].is_default);
  EXPECT_EQ(r->apns[0].limits.rate_per_second, 5);
  EXPECT_EQ(r->apns[1].certificate_file, "/c.p12");
  EXPECT_EQ(r->apns[1].production_url, "https://127.0.0.1:1");
  EXPECT_EQ(r->apns[1].development_url, "https://api.sandbox.push.apple.com");
  ASSERT_EQ(r->fcm.size(), 1u);
  EXPECT_EQ(r->fcm[0].url, "https://fcm.googleapis.com");
  EXPECT_EQ(r->fcm[0].limits.token_per_minute, 0);
}

TEST(RelayConfigTest, RefusalsNameTheAppTheKeyAndTheLine) {
  EXPECT_NE(
      RelayError("[[relay.apns]]\nname = \"a\"\ntopic = \"t\"\nkey_file = \"k\"\nkey_id = \"K\"\n"
                 "team_id = \"T\"\ncolour = 1\n")
          .find("relay.apns #1 (a): unknown key colour (line 7)"),
      std::string::npos);
  EXPECT_NE(RelayError("[[relay.apns]]\nname = \"a\"\ntopic = \"t\"\n").find("either key_file"),
            std::string::npos);
  EXPECT_NE(RelayError("[[relay.apns]]\nname = \"a\"\ntopic = \"t\"\nkey_file = \"k\"\n")
                .find("needs key_id and team_id"),
            std::string::npos);
  EXPECT_NE(RelayError("[[relay.apns]]\nname = \"production\"\ntopic = \"t\"\ncertificate_file = "
                       "\"c\"\n")
                .find("is a word of the relay's URLs"),
            std::string::npos);
  EXPECT_NE(RelayError("[[relay.fcm]]\nname = \"a\"\n").find("service_account_file is missing"),
            std::string::npos);
  EXPECT_NE(RelayError("[[relay.fcm]]\nname = \"a b\"\nservice_account_file = \"s\"\n")
                .find("name must be"),
            std::string::npos);
  EXPECT_NE(RelayError("[[relay.fcm]]\nname = \"a\"\nservice_account_file = \"s\"\n[[relay.fcm]]\n"
                       "name = \"a\"\nservice_account_file = \"s\"\n")
                .find("two apps are called \"a\""),
            std::string::npos);
  EXPECT_NE(RelayError("[[relay.fcm]]\nname = \"a\"\nservice_account_file = \"s\"\n[[relay.apns]]\n"
                       "name = \"a\"\ntopic = \"t\"\ncertificate_file = \"c\"\n")
                .find("both called \"a\""),
            std::string::npos);
  EXPECT_NE(RelayError("[relay]\nlisten = 1\n").find("unknown key relay.listen"),
            std::string::npos);
  EXPECT_NE(RelayError("[[relay.fcm]]\nname = \"a\"\nservice_account_file = \"s\"\nburst = -1\n")
                .find("burst must be an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace bulkhead
