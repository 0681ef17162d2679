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

TEST(ConfigTest, SidekiqBridgeSettingsAndTheirRelations) {
  Config c;
  EXPECT_FALSE(c.sidekiq.enabled()) << "off by default";
  c.sidekiq.queues.clear();
  EXPECT_TRUE(c.Validate().ok()) << "not checked while off";
  c.sidekiq.redis = "redis://127.0.0.1:6379/0";
  EXPECT_EQ(c.Validate().message(), "sidekiq.queues must name a queue");
  c.sidekiq.queues = {"push", "bad queue"};
  EXPECT_EQ(c.Validate().message(),
            "sidekiq.queues: \"bad queue\" may hold only letters, digits, '_', '-' and '.', not "
            "\"bad queue\"");
  c.sidekiq.queues = {"push", "bulkhead"};
  EXPECT_TRUE(c.Validate().ok());
  c.sidekiq.ca_file = "/etc/ssl/ca.pem";
  EXPECT_EQ(c.Validate().message(), "sidekiq.ca_file is for a rediss:// sidekiq.redis");
  c.sidekiq.redis = "http://example.com";
  EXPECT_NE(c.Validate().message().find("sidekiq.redis must be empty (no bridge) or a redis://"),
            std::string::npos)
      << c.Validate().message();
}

TEST(ConfigTest, RedisSettingsAndTheirRelations) {
  Config c;
  c.store = "redis://:s3cret@127.0.0.1:6379/2";
  EXPECT_TRUE(c.Validate().ok());
  c.durability = "replicated";
  EXPECT_TRUE(c.Validate().ok());
  c.durability = "power";
  EXPECT_NE(c.Validate().message().find("appendfsync"), std::string::npos);
  c.durability = "process";
  c.redis_ca_file = "/etc/ssl/ca.pem";
  std::string ca = c.Validate().message();
  EXPECT_NE(ca.find("redis_ca_file is for rediss:// stores"), std::string::npos) << ca;
  EXPECT_EQ(ca.find("s3cret"), std::string::npos) << "a store URL's password is never shown";
  c.store = "rediss://127.0.0.1:6380";
  EXPECT_TRUE(c.Validate().ok());
  c = Config{};
  c.durability = "replicated";
  EXPECT_NE(c.Validate().message().find("needs a Redis store"), std::string::npos);
  c = Config{};
  c.redis_namespace = "a{b}";
  EXPECT_NE(c.Validate().message().find("redis_namespace may hold only"), std::string::npos)
      << c.Validate().message();
  c.redis_namespace = "";
  EXPECT_FALSE(c.Validate().ok());
  c = Config{};
  c.redis_heartbeat_ms = 200;
  c.redis_heartbeat_ttl_ms = 600;
  c.redis_reap_ms = 100;
  EXPECT_TRUE(c.Validate().ok()) << c.Validate().message();
  c.redis_heartbeat_ttl_ms = 200;
  EXPECT_NE(c.Validate().message().find("redis_heartbeat_ttl_ms (200) must exceed"),
            std::string::npos)
      << c.Validate().message();
  EXPECT_TRUE(IsRedisStoreUrl("redis-sentinel://a:26379,b:26379/mymaster"));
  EXPECT_FALSE(IsRedisStoreUrl("sqlite:redis://x"));
}

TEST(ConfigTest, HardeningBoundsLoadAndValidate) {
  auto path = WriteTemp(R"(
max_json_depth = 32
unsent_replies_pause_bytes = 65536
max_unsent_reply_bytes = 1048576
max_line_bytes = 4096
http_max_connections = 10
login_failure_delay_ms = 0
)");
  auto c = LoadConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->max_json_depth, 32);
  EXPECT_EQ(c->unsent_replies_pause_bytes, 65536);
  EXPECT_EQ(c->UnsentReplyCap(), 1048576);
  EXPECT_EQ(c->http_max_connections, 10);
  EXPECT_EQ(c->login_failure_delay_ms, 0);
  EXPECT_TRUE(c->Validate().ok());
  std::filesystem::remove(path);

  Config d;
  EXPECT_EQ(d.max_json_depth, 64);
  EXPECT_EQ(d.UnsentReplyCap(), 64 * 1024 * 1024);
  d.max_line_bytes = 32 * 1024 * 1024;  // the largest job must fit in one reply
  EXPECT_EQ(d.UnsentReplyCap(), 128 * 1024 * 1024);
  d = Config{};
  d.max_json_depth = 2;
  EXPECT_NE(d.Validate().message().find("max_json_depth must be between 8 and 1000"),
            std::string::npos);
  d = Config{};
  d.max_unsent_reply_bytes = d.unsent_replies_pause_bytes;
  EXPECT_NE(d.Validate().message().find("max_unsent_reply_bytes"), std::string::npos);
  d = Config{};
  d.http_max_connections = 0;
  EXPECT_NE(d.Validate().message().find("http_max_connections"), std::string::npos);
  d = Config{};
  d.login_failure_delay_ms = -1;
  EXPECT_NE(d.Validate().message().find("login_failure_delay_ms"), std::string::npos);
}

TEST(ConfigTest, AFloatForAnIntegerIsAnErrorWithItsLine) {
  // toml++'s value<int64_t>() converts floats: 1e30 was undefined behaviour (found by fuzzing).
  auto path = WriteTemp("listen = \"127.0.0.1:9000\"\nmax_connections = 1e30\n");
  auto c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("max_connections must be an integer (line 2)"),
            std::string::npos)
      << c.status().message();
  path = WriteTemp("[delivery.webpush]\ntotal_timeout_ms = 1.5e79\n");
  c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(
      c.status().message().find("delivery.webpush.total_timeout_ms must be an integer (line 2)"),
      std::string::npos)
      << c.status().message();
  path = WriteTemp("\n\nlisen = 1\n");
  c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("unknown key lisen (line 3)"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(ConfigTest, AnIntegerOutOfItsSettingsRangeIsNamedNotWrapped) {
  auto path = WriteTemp("max_connections = 5000000000\n");
  auto c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("max_connections must be an integer between"),
            std::string::npos)
      << c.status().message();
  std::filesystem::remove(path);
}

TEST(ConfigTest, TlsFilesComeInPairsAndFromTheTlsFolderBesideTheConfig) {
  Config c;
  c.tls_cert_file = "/etc/bulkhead/cert.pem";
  EXPECT_NE(c.Validate().message().find("tls_cert_file and tls_key_file must be set together"),
            std::string::npos);

  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_config_tls_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "tls");
  std::ofstream(dir / "bulkhead.toml") << "listen = \"127.0.0.1:9000\"\n";
  auto plain = LoadConfigFile((dir / "bulkhead.toml").string());
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->tls_cert_file, "") << "no tls/ files: no TLS";
  std::ofstream(dir / "tls" / "public.crt") << "x";
  std::ofstream(dir / "tls" / "private.key") << "x";
  auto with = LoadConfigFile((dir / "bulkhead.toml").string());
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_EQ(with->tls_cert_file, (dir / "tls" / "public.crt").string());
  EXPECT_EQ(with->tls_key_file, (dir / "tls" / "private.key").string());
  std::ofstream(dir / "bulkhead.toml") << "tls_cert_file = \"/a.crt\"\ntls_key_file = \"/a.key\"\n";
  auto explicit_files = LoadConfigFile((dir / "bulkhead.toml").string());
  ASSERT_TRUE(explicit_files.ok());
  EXPECT_EQ(explicit_files->tls_cert_file, "/a.crt") << "explicit settings win";
  std::filesystem::remove_all(dir);
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
  EXPECT_EQ(defaults.delivery.activitypub.deadline_hours, 48);
  EXPECT_EQ(defaults.delivery.webhook.deadline_hours, 24);
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
  // The older top-level spelling still sets the per-type deadline.
  EXPECT_EQ(c->delivery.activitypub.deadline_hours, 72);
  EXPECT_EQ(c->delivery.webhook.deadline_hours, 6);
  EXPECT_TRUE(c->Validate().ok());
  Config bad;
  bad.vapid_subject = "ops@example.com";
  EXPECT_NE(bad.Validate().message().find("vapid_subject"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(ConfigTest, DeliveryCaFile) {
  EXPECT_EQ(Config{}.delivery_ca_file, "") << "default: the system's CA bundle";
  auto path = WriteTemp("delivery_ca_file = \"/etc/bulkhead/webhooks-ca.pem\"\n");
  auto c = LoadConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->delivery_ca_file, "/etc/bulkhead/webhooks-ca.pem");
  EXPECT_TRUE(c->Validate().ok());
  path = WriteTemp("delivery_ca_file = 1\n");
  c = LoadConfigFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("delivery_ca_file must be a string"), std::string::npos)
      << c.status().ToString();
  std::filesystem::remove(path);
}

TEST(ConfigTest, DeliveryDefaultsAreMastodons) {
  Config c;
  const DeliverySettings& d = c.delivery;
  EXPECT_EQ(d.global_max_in_flight, 1024);
  EXPECT_EQ(d.host_cap_initial, 4);
  EXPECT_EQ(d.host_cap_min, 1);
  EXPECT_EQ(d.host_cap_max, 32);
  EXPECT_EQ(d.breaker_failure_threshold, 5);
  EXPECT_EQ(d.breaker_open_min_seconds, 30);
  EXPECT_EQ(d.breaker_open_max_seconds, 600);
  EXPECT_EQ(d.unavailable_after_days, 7);
  EXPECT_EQ(d.max_retry_after_seconds, 3600);
  EXPECT_EQ(d.slow_call_threshold_ms, 10000);
  for (const DeliveryKindSettings* k : {&d.webpush, &d.activitypub, &d.webhook}) {
    EXPECT_EQ(k->connect_timeout_ms, 5000);
    EXPECT_EQ(k->first_byte_timeout_ms, 10000);
    EXPECT_EQ(k->total_timeout_ms, 30000);
    EXPECT_EQ(k->low_speed_bytes_per_second, 0) << "no low-speed cut: total ends a drip";
    EXPECT_EQ(k->low_speed_seconds, 0);
  }
  EXPECT_EQ(d.webpush.deadline_hours, 0) << "webpush uses the job's ttl";
  EXPECT_TRUE(c.Validate().ok());
}

TEST(ConfigTest, DeliveryTables) {
  auto path = WriteTemp(R"(
[delivery]
global_max_in_flight = 64
host_cap_initial = 2
host_cap_min = 2
host_cap_max = 8
breaker_failure_threshold = 3
breaker_open_min_seconds = 10
breaker_open_max_seconds = 120
unavailable_after_days = 3
max_retry_after_seconds = 600
slow_call_threshold_ms = 0

[delivery.webpush]
connect_timeout_ms = 2000
first_byte_timeout_ms = 4000
total_timeout_ms = 8000
low_speed_bytes_per_second = 10
low_speed_seconds = 5

[delivery.activitypub]
total_timeout_ms = 20000
deadline_hours = 72

[delivery.webhook]
first_byte_timeout_ms = 0
deadline_hours = 6
)");
  auto c = LoadConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const DeliverySettings& d = c->delivery;
  EXPECT_EQ(d.global_max_in_flight, 64);
  EXPECT_EQ(d.host_cap_initial, 2);
  EXPECT_EQ(d.host_cap_min, 2);
  EXPECT_EQ(d.host_cap_max, 8);
  EXPECT_EQ(d.breaker_failure_threshold, 3);
  EXPECT_EQ(d.breaker_open_min_seconds, 10);
  EXPECT_EQ(d.breaker_open_max_seconds, 120);
  EXPECT_EQ(d.unavailable_after_days, 3);
  EXPECT_EQ(d.max_retry_after_seconds, 600);
  EXPECT_EQ(d.slow_call_threshold_ms, 0);
  EXPECT_EQ(d.webpush.connect_timeout_ms, 2000);
  EXPECT_EQ(d.webpush.first_byte_timeout_ms, 4000);
  EXPECT_EQ(d.webpush.total_timeout_ms, 8000);
  EXPECT_EQ(d.webpush.low_speed_bytes_per_second, 10);
  EXPECT_EQ(d.webpush.low_speed_seconds, 5);
  EXPECT_EQ(d.activitypub.total_timeout_ms, 20000);
  EXPECT_EQ(d.activitypub.connect_timeout_ms, 5000) << "unset keys keep their default";
  EXPECT_EQ(d.activitypub.deadline_hours, 72);
  EXPECT_EQ(d.webhook.first_byte_timeout_ms, 0);
  EXPECT_EQ(d.webhook.deadline_hours, 6);
  EXPECT_TRUE(c->Validate().ok()) << c->Validate().ToString();
  std::filesystem::remove(path);
}

TEST(ConfigTest, DeliveryKeysAreCheckedWhenRead) {
  struct Case {
    const char* toml;
    const char* message;
  };
  const Case cases[] = {
      {"[delivery]\nglobal_max_in_flite = 1\n", "unknown key delivery.global_max_in_flite"},
      {"[delivery.webhook]\ntotal_timeout = 1\n", "unknown key delivery.webhook.total_timeout"},
      {"[delivery.mail]\ntotal_timeout_ms = 1\n", "unknown key delivery.mail"},
      {"[delivery.webhook]\ntotal_timeout_ms = \"30s\"\n",
       "delivery.webhook.total_timeout_ms must be an integer"},
      {"[delivery]\nhost_cap_max = 99999999999\n", "delivery.host_cap_max must be an integer"},
      {"delivery = 3\n", "delivery must be a table"},
      {"[delivery]\nwebhook = 3\n", "delivery.webhook must be a table"},
      {"[delivery.webpush]\ndeadline_hours = 1\n", "webpush jobs expire with their own ttl"},
      {"webhook_deadline_hours = 2\n[delivery.webhook]\ndeadline_hours = 3\n",
       "set either webhook_deadline_hours or delivery.webhook.deadline_hours, not both"},
      // Found by fuzz_config: hours past the bound overflowed std::chrono's nanoseconds.
      {"activitypub_deadline_hours = 999199999\n", "activitypub_deadline_hours"},
      {"[delivery.webhook]\ndeadline_hours = 8761\n", "delivery.webhook.deadline_hours"},
      {"[delivery]\nunavailable_after_days = 366\n", "delivery.unavailable_after_days"},
      {"[delivery]\nmax_retry_after_seconds = 99999999999\n", "delivery.max_retry_after_seconds"},
  };
  for (const Case& k : cases) {
    auto path = WriteTemp(k.toml);
    auto c = LoadConfigFile(path);
    ASSERT_FALSE(c.ok()) << k.toml;
    EXPECT_NE(c.status().message().find(k.message), std::string::npos)
        << k.toml << " gave: " << c.status().message();
    std::filesystem::remove(path);
  }
}

TEST(ConfigTest, DeliveryValidationNamesTheSetting) {
  struct Case {
    void (*change)(DeliverySettings&);
    const char* message;
  };
  const Case cases[] = {
      {[](DeliverySettings& d) { d.global_max_in_flight = 0; },
       "delivery.global_max_in_flight must be at least 1"},
      {[](DeliverySettings& d) { d.host_cap_min = 0; }, "delivery.host_cap_min must be at least 1"},
      {[](DeliverySettings& d) { d.host_cap_max = 0; },
       "delivery.host_cap_max (0) must be at least host_cap_min (1)"},
      {[](DeliverySettings& d) { d.host_cap_initial = 33; },
       "delivery.host_cap_initial (33) must be between host_cap_min and host_cap_max (1..32)"},
      {[](DeliverySettings& d) { d.breaker_failure_threshold = 0; },
       "delivery.breaker_failure_threshold must be at least 1"},
      {[](DeliverySettings& d) { d.breaker_open_min_seconds = 0; },
       "delivery.breaker_open_min_seconds must be at least 1"},
      {[](DeliverySettings& d) { d.breaker_open_max_seconds = 10; },
       "delivery.breaker_open_max_seconds (10) must be at least breaker_open_min_seconds (30)"},
      {[](DeliverySettings& d) { d.unavailable_after_days = 0; },
       "delivery.unavailable_after_days must be between 1 and 365"},
      {[](DeliverySettings& d) { d.max_retry_after_seconds = 0; },
       "delivery.max_retry_after_seconds must be between 1 and 31536000"},
      {[](DeliverySettings& d) { d.slow_call_threshold_ms = -1; },
       "delivery.slow_call_threshold_ms must be 0 (off) or more"},
      {[](DeliverySettings& d) { d.webhook.total_timeout_ms = 0; },
       "delivery.webhook.total_timeout_ms must be at least 1"},
      {[](DeliverySettings& d) { d.webpush.connect_timeout_ms = -1; },
       "delivery.webpush.connect_timeout_ms must be 0 (off) or more"},
      {[](DeliverySettings& d) { d.activitypub.connect_timeout_ms = 40000; },
       "delivery.activitypub.connect_timeout_ms (40000) must not exceed total_timeout_ms (30000)"},
      {[](DeliverySettings& d) { d.webhook.first_byte_timeout_ms = 40000; },
       "delivery.webhook.first_byte_timeout_ms (40000) must not exceed total_timeout_ms (30000)"},
      {[](DeliverySettings& d) { d.webhook.low_speed_seconds = 5; },
       "delivery.webhook.low_speed_bytes_per_second and low_speed_seconds must be set together"},
      {[](DeliverySettings& d) { d.activitypub.deadline_hours = 0; },
       "delivery.activitypub.deadline_hours must be between 1 and 8760"},
  };
  for (const Case& k : cases) {
    Config c;
    k.change(c.delivery);
    Status s = c.Validate();
    ASSERT_FALSE(s.ok()) << k.message;
    EXPECT_NE(s.message().find(k.message), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace bulkhead
