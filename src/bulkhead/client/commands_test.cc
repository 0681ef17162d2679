// The client-side subcommands registered on a CLI11 app, as main() does, without a server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "bulkhead/client/info_command.h"
#include "bulkhead/client/push_command.h"
#include "bulkhead/client/stats_command.h"
#include "bulkhead/client/vapid_key_command.h"
#include "bulkhead/client/version_command.h"

namespace bulkhead {
namespace {

// CLI11 takes the arguments last first.
void Parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());
  app.parse(args);
}

// Port 1 on loopback: nothing listens there, so connecting is refused at once.
constexpr const char* kNobody = "tcp://127.0.0.1:1";

TEST(CommandsTest, OnlyTheChosenCommandIsSelected) {
  CLI::App app;
  PushCommand push(app);
  InfoCommand info(app);
  StatsCommand stats(app);
  VersionCommand version(app);
  Parse(app, {"version"});
  EXPECT_TRUE(version.selected());
  EXPECT_FALSE(push.selected());
  EXPECT_FALSE(info.selected());
  EXPECT_FALSE(stats.selected());
  std::ostringstream out;
  ASSERT_TRUE(version.Run(out).ok());
  EXPECT_EQ(out.str(), std::string("bulkhead ") + BULKHEAD_VERSION +
                           " (Faktory protocol v2, compatible with 1.10)\n");
}

TEST(CommandsTest, PushRefusesAJobThatIsNotAnObjectBeforeConnecting) {
  for (const char* job : {"[1,2]", "not json", "\"job\""}) {
    CLI::App app;
    PushCommand push(app);
    Parse(app, {"push", "--url", kNobody, job});
    std::istringstream in;
    std::ostringstream out;
    EXPECT_EQ(push.Run(in, out).message(), "the job must be a JSON object") << job;
    EXPECT_EQ(out.str(), "");
  }
}

TEST(CommandsTest, PushReadsStdinAndInfoAndStatsNameAnUnreachableServer) {
  CLI::App app;
  PushCommand push(app);
  Parse(app, {"push", "--url", kNobody});
  std::istringstream in("{\"jobtype\":\"Mail\"}");
  std::ostringstream out;
  Status s = push.Run(in, out);
  EXPECT_FALSE(s.ok()) << "read stdin, then failed to connect";
  EXPECT_NE(s.message(), "the job must be a JSON object");

  CLI::App info_app;
  InfoCommand info(info_app);
  Parse(info_app, {"info", "--url", kNobody});
  EXPECT_FALSE(info.Run(out).ok());
  CLI::App stats_app;
  StatsCommand stats(stats_app);
  Parse(stats_app, {"stats", "--url", "ftp://nowhere"});
  EXPECT_FALSE(stats.Run().ok());
}

TEST(CommandsTest, VapidKeyCreatesTheKeyOnceAndPrintsThePublicKey) {
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_vapid_command_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string first;
  for (int run = 0; run < 2; ++run) {
    CLI::App app;
    VapidKeyCommand vapid(app);
    Parse(app, {"vapid-key", "--data-dir", dir.string()});
    std::ostringstream out, err;
    Status s = vapid.Run(out, err);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(out.str().size(), 88u) << "87 base64url characters and a newline";
    if (run == 0) {
      EXPECT_NE(err.str().find("bulkhead: generated " + (dir / "vapid.pem").string()),
                std::string::npos)
          << err.str();
      first = out.str();
    } else {
      EXPECT_EQ(err.str(), "");
      EXPECT_EQ(out.str(), first);
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bulkhead
