#include "bulkhead/config/settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "bulkhead/config/setting_flags.h"
#include "bulkhead/config/settings_doc.h"

namespace bulkhead {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("bulkhead_settings_test_" + std::to_string(::getpid()) + "_" + name + ".toml"))
      .string();
}

// A valid value other than the default, for the round trip.
SettingValue OtherValue(const Setting& s) {
  SettingValue v = GetSetting(s, Config{});
  if (auto* b = std::get_if<bool>(&v)) return !*b;
  if (auto* list = std::get_if<std::vector<std::string>>(&v)) {
    list->push_back("env:test");
    return v;
  }
  if (auto* i = std::get_if<int64_t>(&v)) {
    int64_t next = *i + 1;
    return SettingProblem(s, SettingValue(next)).empty() ? next : *i - 1;
  }
  auto& text = std::get<std::string>(v);
  if (s.check) {
    for (const char* candidate :
         {"127.0.0.1:9", "https://example.com/", "outcomes", "/bulkhead", "redis://127.0.0.1:9"}) {
      if (SettingProblem(s, SettingValue(std::string(candidate))).empty()) return candidate;
    }
  }
  for (const std::string& a : s.allowed) {
    if (a != text) return a;
  }
  return text + "x";
}

TEST(SettingsTest, EveryRowHasADocAndADefaultThatValidates) {
  std::set<std::string> keys, flags;
  for (const Setting& s : Settings()) {
    EXPECT_FALSE(s.doc.empty()) << s.key;
    EXPECT_TRUE(keys.insert(s.key).second) << "duplicate key " << s.key;
    if (!s.flag.empty()) {
      EXPECT_TRUE(flags.insert(s.flag).second) << "duplicate flag " << s.flag;
    }
    EXPECT_EQ(SettingProblem(s, GetSetting(s, Config{})), "") << s.key;
    EXPECT_EQ(FindSetting(s.key), &s);
    if (!s.older_spelling_of.empty()) {
      EXPECT_NE(FindSetting(s.older_spelling_of), nullptr) << s.key;
    }
  }
  EXPECT_TRUE(ValidateSettings(Config{}).ok());
}

TEST(SettingsTest, EveryRowRoundTripsThroughAFile) {
  Config want;
  std::string toml;
  for (const Setting& s : Settings()) {
    if (!s.older_spelling_of.empty()) continue;  // sets the same member as its newer key
    SettingValue v = OtherValue(s);
    ASSERT_EQ(SettingProblem(s, v), "") << s.key << " = " << TomlLiteral(v);
    ASSERT_TRUE(SetSetting(s, v, want).ok()) << s.key;
    // Dotted keys at the top level are TOML's spelling of the same tables.
    toml += s.key + " = " + TomlLiteral(v) + "\n";
  }
  std::string path = TempPath("roundtrip");
  std::ofstream(path) << toml;
  auto got = LoadConfigFile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << toml;
  for (const Setting& s : Settings()) {
    EXPECT_EQ(GetSetting(s, *got), GetSetting(s, want)) << s.key;
    EXPECT_NE(GetSetting(s, *got), GetSetting(s, Config{})) << s.key << " kept its default";
  }
}

TEST(SettingsTest, OutOfRangeValuesAreRefusedWithKeyValueAndLine) {
  struct Case {
    const char* toml;
    const char* message;
  };
  const Case cases[] = {
      {"\nmax_json_depth = 2\n", "max_json_depth must be between 8 and 1000, not 2 (line 2)"},
      {"[delivery]\nglobal_max_in_flight = 0\n",
       "delivery.global_max_in_flight must be at least 1, not 0 (line 2)"},
      {"[delivery.webhook]\nconnect_timeout_ms = -5\n",
       "delivery.webhook.connect_timeout_ms must be 0 (off) or more, not -5 (line 2)"},
      {"durability = \"maybe\"\n",
       "durability must be one of \"process\", \"power\" or \"replicated\", not \"maybe\""},
      {"log_level = \"loud\"\n", "log_level must be one of \"trace\", \"debug\""},
      {"listen = \"nowhere\"\n", "listen is an invalid address \"nowhere\""},
      {"allow_private_targets = 1\n", "allow_private_targets must be true or false (line 1)"},
      {"[statsd]\ntags = [1]\n", "statsd.tags must be an array of strings (line 2)"},
      {"[statsd]\ninterval = 0\n", "statsd.interval must be at least 1, not 0 (line 2)"},
      {"[jobtypes.mail]\nretry = -2\n", "jobtypes.mail.retry must be -1 or more, not -2"},
      {"[jobtypes.mail]\nretries = 1\n", "unknown key jobtypes.mail.retries (line 2)"},
  };
  for (const Case& k : cases) {
    std::string path = TempPath("range");
    std::ofstream(path) << k.toml;
    auto c = LoadConfigFile(path);
    std::filesystem::remove(path);
    ASSERT_FALSE(c.ok()) << k.toml;
    EXPECT_NE(c.status().message().find(k.message), std::string::npos)
        << k.toml << " gave: " << c.status().message();
  }
}

TEST(SettingsTest, FlagsAreInTheHelpWithTheirDefaultsAndOverrideTheConfig) {
  CLI::App app{"test"};
  SettingFlags flags(app);
  std::string help = app.help();
  for (const Setting& s : Settings()) {
    if (s.flag.empty()) continue;
    EXPECT_NE(help.find(s.flag), std::string::npos) << s.flag << " missing from\n" << help;
    if (TypeOf(s) == SettingType::kBool) continue;  // a flag without a value
    EXPECT_NE(help.find(s.flag + " TEXT=" + DefaultText(s)), std::string::npos)
        << s.flag << "'s default missing from\n"
        << help;
  }

  std::vector<std::string> args = {"--log-level", "debug", "--allow-private-targets", "--store",
                                   "memory:"};
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  app.parse(args);
  Config c;
  c.listen = "127.0.0.1:1";
  ASSERT_TRUE(flags.ApplyTo(c).ok());
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_TRUE(c.allow_private_targets);
  EXPECT_EQ(c.store, "memory:");
  EXPECT_EQ(c.listen, "127.0.0.1:1") << "a flag not given leaves the file's value";

  CLI::App bad_app{"test"};
  SettingFlags bad_flags(bad_app);
  bad_app.parse(std::vector<std::string>{"nowhere", "--listen"});
  Status s = bad_flags.ApplyTo(c);
  EXPECT_NE(s.message().find("--listen is an invalid address \"nowhere\""), std::string::npos)
      << s.message();
}

// The repository root: BULKHEAD_SOURCE_DIR (ctest sets it), else derived from this file's path
// for running the binary by hand. A relative __FILE__ (ccache's base_dir) is relative to the
// directory it was compiled in, which is this binary's.
std::filesystem::path SourceRoot() {
  if (const char* root = std::getenv("BULKHEAD_SOURCE_DIR")) return root;
  std::filesystem::path file = __FILE__;
  if (file.is_relative())
    file = std::filesystem::read_symlink("/proc/self/exe").parent_path() / file;
  return file.parent_path() / ".." / ".." / "..";
}

// README.md's settings table is SettingsMarkdown(). To regenerate it after changing the table:
//   BULKHEAD_UPDATE_GOLDEN=1 build/src/bulkhead/config/config_test --gtest_filter='*Readme*'
TEST(SettingsTest, ReadmeTableIsTheGeneratedOne) {
  std::filesystem::path readme = SourceRoot() / "README.md";
  std::ifstream in(readme);
  ASSERT_TRUE(in) << "cannot read " << readme;
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  size_t begin = doc.find(kReadmeSettingsBegin);
  size_t end = doc.find(kReadmeSettingsEnd);
  ASSERT_NE(begin, std::string::npos) << readme << " lacks " << kReadmeSettingsBegin;
  ASSERT_NE(end, std::string::npos) << readme << " lacks " << kReadmeSettingsEnd;
  begin += std::string(kReadmeSettingsBegin).size() + 1;
  std::string generated = SettingsMarkdown();
  if (std::getenv("BULKHEAD_UPDATE_GOLDEN")) {
    doc.replace(begin, end - begin, generated);
    std::ofstream(readme) << doc;
    GTEST_SKIP() << "wrote " << readme;
  }
  EXPECT_EQ(doc.substr(begin, end - begin), generated)
      << "README.md's settings table differs from the settings table in "
         "src/bulkhead/config/settings.cc. Regenerate it with:\n"
         "  BULKHEAD_UPDATE_GOLDEN=1 build/src/bulkhead/config/config_test "
         "--gtest_filter='*Readme*'";
}

}  // namespace
}  // namespace bulkhead
