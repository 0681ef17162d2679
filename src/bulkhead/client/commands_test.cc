// The client-side subcommands registered on a CLI11 app, as main() does, without a server.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "bulkhead/client/backup_command.h"
#include "bulkhead/client/info_command.h"
#include "bulkhead/client/push_command.h"
#include "bulkhead/client/restore_command.h"
#include "bulkhead/client/stats_command.h"
#include "bulkhead/client/vapid_key_command.h"
#include "bulkhead/client/version_command.h"
#include "bulkhead/util/base64.h"

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
  EXPECT_FALSE(stats.Run(out).ok());
}

// A Faktory server for one connection on a free loopback port: it greets (no password), accepts
// HELLO, answers the next command with `reply` (raw protocol text) and then reads until the client
// closes. The destructor waits for that, so the client must connect.
class OneReplyServer {
 public:
  explicit OneReplyServer(std::string reply) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(listen_fd_, 1) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on loopback";
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, reply = std::move(reply)] { Serve(reply); });
  }
  ~OneReplyServer() {
    thread_.join();
    close(listen_fd_);
  }

  std::string url() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

 private:
  void Serve(const std::string& reply) {
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    Send(fd, "+HI {\"v\":2}\r\n");
    SkipLine(fd);  // HELLO
    Send(fd, "+OK\r\n");
    SkipLine(fd);
    Send(fd, reply);
    char buf[256];
    while (read(fd, buf, sizeof(buf)) > 0) {
    }
    close(fd);
  }
  static void Send(int fd, const std::string& text) {
    (void)send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  }
  static void SkipLine(int fd) {
    char ch = 0;
    while (read(fd, &ch, 1) == 1 && ch != '\n') {
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(CommandsTest, InfoNamesAReplyThatIsNotJson) {
  OneReplyServer server("$4\r\n{bad\r\n");
  CLI::App app;
  InfoCommand info(app);
  Parse(app, {"info", "--url", server.url()});
  std::ostringstream out;
  Status s = info.Run(out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("INFO reply: invalid JSON", 0), 0u) << s.message();
  EXPECT_EQ(out.str(), "");
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
    Status s = vapid.Run(out, err, VapidKeyVariables());
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

// A Mastodon-format pair (see encoders/vapid_test.cc: a 31-byte scalar, `=`-padded).
constexpr char kMastodonPrivate[] = "XbYDni16aOCDzlqiQzKwN5Gbe9-8rx-lmgOUBY-A1w==";
constexpr char kMastodonPublic[] =
    "BHLWOVoCus4gsxUKZigP_qOs3RYO_2pZcffGRq9n1BiAfVKodRiXh5UyipiNjbpkCIDh8FFbqwdykC_nNkPEneU=";

class VapidKeyImportTest : public ::testing::Test {
 protected:
  VapidKeyImportTest()
      : dir_(std::filesystem::temp_directory_path() /
             ("bulkhead_vapid_import_test_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    mastodon_.private_key = kMastodonPrivate;
    mastodon_.public_key = kMastodonPublic;
  }
  ~VapidKeyImportTest() override { std::filesystem::remove_all(dir_); }

  struct Ran {
    Status status;
    std::string out;
    std::string err;
  };
  Ran Run(std::vector<std::string> args, const VapidKeyVariables& env) {
    CLI::App app;
    VapidKeyCommand vapid(app);
    Parse(app, std::move(args));
    EXPECT_TRUE(vapid.selected());
    std::ostringstream out, err;
    Status s = vapid.Run(out, err, env);
    return {s, out.str(), err.str()};
  }
  std::string KeyFile() const { return (dir_ / "keys" / "vapid.pem").string(); }
  std::string DataDir() const { return (dir_ / "keys").string(); }

  std::filesystem::path dir_;
  VapidKeyVariables mastodon_;
};

TEST_F(VapidKeyImportTest, ImportWritesMastodonsKeyAsAPrivateFileAndPrintsItsPublicKey) {
  Ran r = Run({"vapid-key", "import", "--data-dir", DataDir()}, mastodon_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, std::string(kMastodonPublic).substr(0, 87) + "\n");
  EXPECT_NE(r.err.find("imported VAPID_PRIVATE_KEY (the environment) into " + KeyFile()),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find(kMastodonPrivate), std::string::npos);
  EXPECT_EQ(r.err.find("XbYDni"), std::string::npos) << "never the private key";
  struct stat st {};
  ASSERT_EQ(::stat(KeyFile().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Afterwards the server's key, without the variables, is Mastodon's: compare in its form.
  r = Run({"vapid-key", "--data-dir", DataDir(), "--mastodon"}, VapidKeyVariables());
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, std::string("VAPID_PUBLIC_KEY=") + kMastodonPublic + "\n");
  EXPECT_EQ(r.err, "");

  // Importing it again changes nothing.
  r = Run({"vapid-key", "import", "--data-dir", DataDir()}, mastodon_);
  ASSERT_TRUE(r.status.ok());
  EXPECT_NE(r.err.find("already holds this key"), std::string::npos) << r.err;
}

TEST_F(VapidKeyImportTest, ImportReadsAnEnvFileAndRefusesToReplaceAnotherKeyUnlessForced) {
  ASSERT_TRUE(Run({"vapid-key", "--data-dir", DataDir()}, VapidKeyVariables()).status.ok())
      << "a generated key first";
  const std::string env = (dir_ / ".env.production").string();
  std::ofstream(env) << "LOCAL_DOMAIN=social.example\nVAPID_PRIVATE_KEY=" << kMastodonPrivate
                     << "\nVAPID_PUBLIC_KEY=" << kMastodonPublic << "\n";
  Ran r =
      Run({"vapid-key", "import", "--env-file", env, "--data-dir", DataDir()}, VapidKeyVariables());
  EXPECT_EQ(r.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status.message().find(KeyFile() + " holds another VAPID key"), std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("--force replaces it"), std::string::npos);
  r = Run({"vapid-key", "import", "--env-file", env, "--force", "--data-dir", DataDir()},
          VapidKeyVariables());
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.err.find("(" + env + ")"), std::string::npos) << r.err;
  r = Run({"vapid-key", "--data-dir", DataDir(), "--mastodon"}, VapidKeyVariables());
  EXPECT_EQ(r.out, std::string("VAPID_PUBLIC_KEY=") + kMastodonPublic + "\n");
}

TEST_F(VapidKeyImportTest, ImportRefusesBadVariablesAndNeverOverwritesAFileThatIsNotPem) {
  VapidKeyVariables mismatched = mastodon_;
  mismatched.public_key = VapidKey::Generate()->PublicKeyMastodonForm();
  Ran r = Run({"vapid-key", "import", "--data-dir", DataDir()}, mismatched);
  EXPECT_EQ(r.status.message(),
            "VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY (the environment)");
  EXPECT_FALSE(std::filesystem::exists(KeyFile())) << "nothing written";
  r = Run({"vapid-key", "import", "--data-dir", DataDir()}, VapidKeyVariables());
  EXPECT_EQ(r.status.message(), "VAPID_PRIVATE_KEY is not set in the environment");

  // vapid_private_key_file naming Mastodon's env file itself: read, never replaced.
  const std::string env = (dir_ / ".env.production").string();
  const std::string text = std::string("VAPID_PRIVATE_KEY=") + kMastodonPrivate + "\n";
  std::ofstream(env) << text;
  const std::string config = (dir_ / "bulkhead.toml").string();
  std::ofstream(config) << "vapid_private_key_file = \"" << env << "\"\n";
  r = Run({"vapid-key", "import", "--force", "--config", config}, mismatched);
  EXPECT_FALSE(r.status.ok());
  VapidKeyVariables other;
  other.private_key = Base64UrlEncode(std::string(31, '\x11'));
  r = Run({"vapid-key", "import", "--force", "--config", config}, other);
  EXPECT_EQ(r.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status.message().find(env + " is not a PEM key file"), std::string::npos)
      << r.status.message();
  std::ifstream in(env);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, text);
  r = Run({"vapid-key", "--config", config, "--mastodon"}, VapidKeyVariables());
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, std::string("VAPID_PUBLIC_KEY=") + kMastodonPublic + "\n")
      << "the server reads Mastodon's lines from the file";
}

TEST_F(VapidKeyImportTest, PrintingWithTheVariablesSetCreatesNoFile) {
  Ran r = Run({"vapid-key", "--data-dir", DataDir()}, mastodon_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, std::string(kMastodonPublic).substr(0, 87) + "\n");
  EXPECT_NE(r.err.find("the key of VAPID_PRIVATE_KEY (the environment)"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(KeyFile()));
}

TEST(BackupCommandTest, NamesTheServerItCannotReach) {
  CLI::App app;
  BackupCommand backup(app);
  Parse(app, {"backup", "/tmp/copy.db", "--http", "127.0.0.1:1"});
  ASSERT_TRUE(backup.selected());
  std::ostringstream out, err;
  Status s = backup.Run(out, err);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("cannot reach the bulkhead HTTP API at http://127.0.0.1:1/api/backup"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(out.str(), "");
}

TEST(RestoreCommandTest, RefusesStoresThatAreNotSqlite) {
  for (const char* store : {"memory:", "redis://127.0.0.1:1"}) {
    CLI::App app;
    RestoreCommand restore(app);
    Parse(app, {"restore", "/tmp/copy.db", "--store", store});
    ASSERT_TRUE(restore.selected());
    std::ostringstream out;
    Status s = restore.Run(out);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("restore replaces a sqlite: store"), std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace bulkhead
