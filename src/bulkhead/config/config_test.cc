#include "bulkhead/config/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace bulkhead {
namespace {

std::string WriteTemp(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("bulkhead_config_test_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml");
  std::ofstream(path) << text;
  return path.string();
}

TEST(ConfigTest, DefaultsMatchTheDocumentation) {
  Config c;
  EXPECT_EQ(c.listen, "127.0.0.1:7419");
  EXPECT_EQ(c.http, "127.0.0.1:7420");
  EXPECT_EQ(c.StoreUrl(), "sqlite:./data/bulkhead.db");
  EXPECT_EQ(c.max_connections, 2000);
  EXPECT_EQ(c.RetryFor("anything"), 25);
  EXPECT_TRUE(c.Validate().ok());
}

TEST(ConfigTest, FileOverridesBaseAndSetsJobtypeRetry) {
  auto path = WriteTemp(R"(
listen = "127.0.0.1:9000"
data_dir = "/var/lib/bulkhead"
password = "s3cret"
max_line_bytes = 4096
[jobtypes.webpush]
retry = 5
)");
  auto c = LoadConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->listen, "127.0.0.1:9000");
  EXPECT_EQ(c->StoreUrl(), "sqlite:/var/lib/bulkhead/bulkhead.db");
  EXPECT_EQ(c->password, "s3cret");
  EXPECT_EQ(c->max_line_bytes, 4096);
  EXPECT_EQ(c->RetryFor("webpush"), 5);
  EXPECT_EQ(c->RetryFor("other"), 25);
  std::filesystem::remove(path);
}

TEST(ConfigTest, UnknownKeysAndWrongTypesAreNamed) {
  auto path = WriteTemp("lisen = \"x\"\n");
  auto c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("unknown key lisen"), std::string::npos);
  path = WriteTemp("max_connections = \"many\"\n");
  c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("max_connections must be an integer"), std::string::npos);
  path = WriteTemp("listen = \n");
  c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("line 1"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(ConfigTest, ValidateNamesTheSetting) {
  Config c;
  c.durability = "maybe";
  EXPECT_NE(c.Validate().message().find("durability"), std::string::npos);
  c = Config{};
  c.listen = "nowhere";
  EXPECT_NE(c.Validate().message().find("invalid address \"nowhere\""), std::string::npos);
}

TEST(ParseHostPortTest, Forms) {
  EXPECT_EQ(ParseHostPort("127.0.0.1:7419")->port, 7419);
  EXPECT_EQ(ParseHostPort("[::1]:80")->host, "::1");
  EXPECT_FALSE(ParseHostPort("host:99999").ok());
  EXPECT_FALSE(ParseHostPort(":80").ok());
}

}  // namespace
}  // namespace bulkhead

namespace bulkhead {
namespace {

TEST(ConfigTest, StatsdSection) {
  auto path = WriteTemp(R"(
[statsd]
address = "127.0.0.1:8125"
flavor = "dogstatsd"
tags = ["env:prod", "service:bulkhead"]
interval = 5
)");
  auto c = LoadConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->statsd.address, "127.0.0.1:8125");
  EXPECT_EQ(c->statsd.flavor, "dogstatsd");
  EXPECT_EQ(c->statsd.tags.size(), 2u);
  EXPECT_EQ(c->statsd.interval_seconds, 5);
  EXPECT_EQ(c->statsd.prefix, "bulkhead");
  path = WriteTemp("[statsd]\nadress = \"x\"\n");
  EXPECT_NE(LoadConfigFile(path).status().message().find("unknown key statsd.adress"),
            std::string::npos);
  std::filesystem::remove(path);
}

TEST(ConfigTest, DeliveryKeys) {
  Config defaults;
  EXPECT_EQ(defaults.vapid_private_key_file, "");
  EXPECT_EQ(defaults.vapid_subject, "mailto:postmaster@localhost");
  EXPECT_EQ(defaults.delivery_outcomes_queue, "bulkhead");
  EXPECT_EQ(defaults.activitypub_deadline_hours, 48);
  EXPECT_EQ(defaults.webhook_deadline_hours, 24);
  auto path = WriteTemp(R"(
vapid_private_key_file = "/etc/bulkhead/vapid.pem"
vapid_subject = "https://social.example/about"
delivery_outcomes_queue = "outcomes"
activitypub_deadline_hours = 72
webhook_deadline_hours = 6
)");
  auto c = LoadConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->vapid_private_key_file, "/etc/bulkhead/vapid.pem");
  EXPECT_EQ(c->vapid_subject, "https://social.example/about");
  EXPECT_EQ(c->delivery_outcomes_queue, "outcomes");
  EXPECT_EQ(c->activitypub_deadline_hours, 72);
  EXPECT_EQ(c->webhook_deadline_hours, 6);
  EXPECT_TRUE(c->Validate().ok());
  Config bad;
  bad.vapid_subject = "ops@example.com";
  EXPECT_NE(bad.Validate().message().find("vapid_subject"), std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace bulkhead
