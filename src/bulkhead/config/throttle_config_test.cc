#include "bulkhead/config/throttle_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bulkhead/config/config.h"

namespace bulkhead {
namespace {

Result<Config> Load(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("bulkhead_throttle_config_test_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml");
  std::ofstream(path) << text;
  auto loaded = LoadConfigFile(path.string());
  std::filesystem::remove(path);
  return loaded;
}

std::string ErrorOf(const std::string& text) {
  auto c = Load(text);
  return c.ok() ? "(loaded)" : c.status().message();
}

TEST(ThrottleConfigTest, ReadsFaktorysForms) {
  auto c = Load(R"(
[throttles]
push = { concurrency = 5, timeout = 60 }
bulk = { worker = 2, timeout = 30 }
"image-processing" = { concurrency = 4, timeout = 30 }
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->throttles.size(), 3u);
  EXPECT_EQ(c->throttles.at("push"), (ThrottleConfig{false, 5, 60}));
  EXPECT_EQ(c->throttles.at("bulk"), (ThrottleConfig{true, 2, 30}));
  EXPECT_EQ(c->throttles.at("image-processing"), (ThrottleConfig{false, 4, 30}));
  EXPECT_TRUE(c->Validate().ok());
}

TEST(ThrottleConfigTest, NoTableMeansNoThrottles) {
  auto c = Load("listen = \"127.0.0.1:9000\"\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->throttles.empty());
}

TEST(ThrottleConfigTest, ErrorsNameTheQueueTheProblemAndTheLine) {
  std::string unknown =
      ErrorOf("[throttles]\n\npush = { concurrency = 5, timeout = 60, rate = 2 }\n");
  EXPECT_NE(unknown.find("throttles.push: unknown key rate"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("(line 3)"), std::string::npos) << unknown;

  std::string both = ErrorOf("[throttles]\npush = { concurrency = 5, worker = 2, timeout = 60 }\n");
  EXPECT_NE(both.find("throttles.push: set either concurrency"), std::string::npos) << both;
  std::string neither = ErrorOf("[throttles]\npush = { timeout = 60 }\n");
  EXPECT_NE(neither.find("throttles.push: needs concurrency = N"), std::string::npos) << neither;
  std::string zero = ErrorOf("[throttles]\npush = { concurrency = 0, timeout = 60 }\n");
  EXPECT_NE(zero.find("throttles.push: concurrency must be 1 to 100000, not 0"), std::string::npos)
      << zero;
  std::string negative = ErrorOf("[throttles]\nbulk = { worker = -2, timeout = 60 }\n");
  EXPECT_NE(negative.find("throttles.bulk: worker must be 1 to 100000, not -2"), std::string::npos)
      << negative;
  std::string no_timeout = ErrorOf("[throttles]\npush = { concurrency = 5 }\n");
  EXPECT_NE(no_timeout.find("throttles.push: needs timeout = SECONDS"), std::string::npos)
      << no_timeout;
  std::string bad_timeout = ErrorOf("[throttles]\npush = { concurrency = 5, timeout = 0 }\n");
  EXPECT_NE(bad_timeout.find("throttles.push: timeout must be 1 to 86400, not 0"),
            std::string::npos)
      << bad_timeout;
  std::string float_timeout = ErrorOf("[throttles]\npush = { concurrency = 5, timeout = 1.5 }\n");
  EXPECT_NE(float_timeout.find("throttles.push: timeout must be an integer"), std::string::npos)
      << float_timeout;
  std::string not_table = ErrorOf("[throttles]\npush = 5\n");
  EXPECT_NE(not_table.find("throttles.push: must be a table"), std::string::npos) << not_table;
  std::string top = ErrorOf("throttles = 3\n");
  EXPECT_NE(top.find("throttles must be a table"), std::string::npos) << top;
}

TEST(ThrottleConfigTest, ValidateChecksRanges) {
  Config c;
  c.throttles["push"] = ThrottleConfig{false, 3, 60};
  EXPECT_TRUE(c.Validate().ok());
  c.throttles["push"].timeout_seconds = 0;
  EXPECT_EQ(c.Validate().message(), "throttles.push: timeout must be 1 to 86400");
  c.throttles["push"] = ThrottleConfig{true, 0, 60};
  EXPECT_EQ(c.Validate().message(), "throttles.push: worker must be 1 to 100000");
}

}  // namespace
}  // namespace bulkhead
