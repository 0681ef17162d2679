// FaktoryClient against the real `bulkhead serve`: the binary in BULKHEAD_BUILD_DIR when set,
// otherwise in the build dir this test binary lives in (<build>/src/bulkhead/client/client_test).
// A transcript of every client command against a live server on free loopback ports.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "bulkhead/client/faktory_client.h"

namespace bulkhead {
namespace {

namespace fs = std::filesystem;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Runs `bulkhead serve` with an in-memory store and a password for the lifetime of the fixture.
class RealServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* build = std::getenv("BULKHEAD_BUILD_DIR");
    if (build != nullptr && *build != '\0') {
      binary_ = std::string(build) + "/bulkhead";
    } else {
      fs::path exe = fs::read_symlink("/proc/self/exe");
      binary_ = (exe.parent_path().parent_path().parent_path().parent_path() / "bulkhead").string();
    }
    ASSERT_EQ(access(binary_.c_str(), X_OK), 0)
        << binary_ << " is not built (build the bulkhead target before the client tests)";
    char tmpl[] = "/tmp/client_server_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    port_ = FreePort();
    int http = FreePort();
    std::vector<std::string> args = {binary_,      "serve",
                                     "--listen",   "127.0.0.1:" + std::to_string(port_),
                                     "--http",     "127.0.0.1:" + std::to_string(http),
                                     "--store",    "memory:",
                                     "--data-dir", dir_};
    std::string log = dir_ + "/server.log";
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      setenv("BULKHEAD_PASSWORD", "s3cret", 1);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(binary_.c_str(), argv.data());
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      int status;
      ASSERT_NE(waitpid(pid_, &status, WNOHANG), pid_) << "server exited: " << Log();
      if (FaktoryClient::Connect("127.0.0.1", port_, "s3cret").ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << "server not ready in 30 s: " << Log();
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
      while (waitpid(pid_, &status, WNOHANG) != pid_) {
        if (std::chrono::steady_clock::now() > deadline) {
          kill(pid_, SIGKILL);
          waitpid(pid_, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string Log() {
    std::ifstream in(dir_ + "/server.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::unique_ptr<FaktoryClient> Client(const std::string& wid = "") {
    auto c = FaktoryClient::Connect("127.0.0.1", port_, "s3cret", wid);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  nlohmann::json InfoJson(FaktoryClient& c) {
    Result<std::string> info = c.Info();
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? nlohmann::json::parse(*info) : nlohmann::json();
  }

  std::string binary_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(RealServerTest, PasswordIsChecked) {
  auto wrong = FaktoryClient::Connect("127.0.0.1", port_, "wrong");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(wrong.status().message(), "HELLO: server replied -ERR Invalid password");
  FaktoryUrl url;
  url.port = port_;
  url.password = "s3cret";
  EXPECT_TRUE(FaktoryClient::Connect(url).ok());
}

TEST_F(RealServerTest, EveryCommand) {
  auto c = Client("client-test-wid");
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Flush().ok());
  const std::string job = R"({"jid":"cpp-job-0001","jobtype":"Noop","args":[1],"queue":"cq"})";
  ASSERT_TRUE(c->Push(job).ok());
  EXPECT_TRUE(c->Push(job).ok()) << "PUSH is idempotent: a held jid is +OK and changes nothing";
  Status bad = c->Push(R"({"jid":"cpp-job-0002","args":[]})");
  EXPECT_EQ(bad.message(), "PUSH: server replied -ERR jobs must have a jobtype parameter");

  Result<std::string> bulk = c->PushBulk(
      R"([{"jid":"cpp-job-0003","jobtype":"Noop","args":[],"queue":"cq"},{"jid":"x","jobtype":"Noop","args":[]}])");
  ASSERT_TRUE(bulk.ok()) << bulk.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(*bulk),
            nlohmann::json::parse(R"({"x":"jobs must have a reasonable jid parameter"})"));

  nlohmann::json info = InfoJson(*c);
  EXPECT_EQ(info["faktory"]["queues"]["cq"], 2);

  Result<std::string> latency = c->QueueLatency({"cq"});
  ASSERT_TRUE(latency.ok()) << latency.status().ToString();
  EXPECT_TRUE(nlohmann::json::parse(*latency)["cq"].is_number());

  // Paused queues are skipped by FETCH; resumed ones are served again.
  ASSERT_TRUE(c->QueueCommand("PAUSE", {"cq"}).ok());
  auto none = c->Fetch({"cq"});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(c->QueueCommand("RESUME", {"cq"}).ok());

  auto first = c->Fetch({"cq"});
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ(nlohmann::json::parse(**first)["jid"], "cpp-job-0001");
  EXPECT_TRUE(c->Ack("cpp-job-0001").ok());
  auto second = c->Fetch({"other", "cq"});
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ(nlohmann::json::parse(**second)["jid"], "cpp-job-0003");
  EXPECT_TRUE(c->Fail("cpp-job-0003", "RuntimeError", "boom", {"a.cc:1", "b.cc:2"}).ok());
  Status unknown = c->Fail("cpp-job-0003", "RuntimeError", "again");
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound) << unknown.ToString();
  EXPECT_EQ(unknown.message(), "FAIL: server replied -ERR Job not found cpp-job-0003");

  info = InfoJson(*c);
  EXPECT_EQ(info["faktory"]["sets"]["retries"], 1);
  EXPECT_EQ(info["faktory"]["total_processed"], 2);
  EXPECT_EQ(info["faktory"]["total_failures"], 1);

  ASSERT_TRUE(
      c->Mutate(R"({"cmd":"kill","target":"retries","filter":{"jids":["cpp-job-0003"]}})").ok());
  info = InfoJson(*c);
  EXPECT_EQ(info["faktory"]["sets"]["retries"], 0);
  EXPECT_EQ(info["faktory"]["sets"]["dead"], 1);
  Status mut = c->Mutate(R"({"cmd":"explode","target":"dead","filter":{}})");
  EXPECT_EQ(
      mut.message(),
      "MUTATE: server replied -ERR unknown mutate operation: explode (clear, kill, discard or "
      "requeue)");

  Result<std::string> beat = c->Beat();
  ASSERT_TRUE(beat.ok()) << beat.status().ToString();
  EXPECT_EQ(*beat, "OK");

  ASSERT_TRUE(c->QueueCommand("REMOVE", {"cq"}).ok());
  Status no_sub = c->QueueCommand("", {});
  EXPECT_EQ(no_sub.code(), StatusCode::kInvalidArgument);

  EXPECT_TRUE(c->End().ok());
}

TEST_F(RealServerTest, PipelinedCommandsAnswerInOrder) {
  auto c = Client();
  ASSERT_NE(c, nullptr);
  std::vector<std::string> lines;
  for (int i = 0; i < 50; ++i) {
    char jid[32];
    std::snprintf(jid, sizeof(jid), "pipe-%06d", i);
    lines.push_back(std::string(R"(PUSH {"jid":")") + jid +
                    R"(","jobtype":"Noop","args":[],"queue":"pq"})");
  }
  lines.push_back("NOPE");
  for (int i = 0; i < 50; ++i) lines.push_back("FETCH pq");
  auto replies = c->Pipeline(lines);
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  for (int i = 0; i < 50; ++i) EXPECT_TRUE((*replies)[i].is_ok()) << (*replies)[i].text;
  EXPECT_EQ((*replies)[50].text, "ERR unknown command NOPE");
  for (int i = 0; i < 50; ++i) {
    const FaktoryReply& r = (*replies)[51 + i];
    ASSERT_EQ(r.kind, FaktoryReply::Kind::kBulk);
    char jid[32];
    std::snprintf(jid, sizeof(jid), "pipe-%06d", i);
    EXPECT_EQ(nlohmann::json::parse(r.text)["jid"], jid) << "FIFO order";
  }
}

}  // namespace
}  // namespace bulkhead
