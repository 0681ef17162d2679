#include "bulkhead/redis/redis_script.h"

#include <gtest/gtest.h>

#include <optional>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/redis/testing/run_until.h"

namespace bulkhead {
namespace {

class RedisScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<RedisServerProcess>> server = RedisServerProcess::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    conn_ = std::make_unique<RedisConnection>(io_, server_->connect_options());
    std::optional<Status> status;
    conn_->Connect([&](Status s) { status = s; });
    ASSERT_TRUE(RunUntil(
        io_, [&] { return status.has_value(); }, "Connect"));
    ASSERT_TRUE(status->ok()) << status->ToString();
  }
  Result<RedisReply> Run(const RedisScript& script, std::vector<std::string> keys,
                         std::vector<std::string> args) {
    std::optional<Result<RedisReply>> result;
    script.Run(*conn_, keys, args, [&](Result<RedisReply> r) { result = std::move(r); });
    EXPECT_FALSE(result.has_value());
    EXPECT_TRUE(RunUntil(
        io_, [&] { return result.has_value(); }, "script reply"));
    if (!result) return Status::Internal("no reply");
    return std::move(*result);
  }
  Result<RedisReply> Call(std::vector<std::string> argv) {
    std::optional<Result<RedisReply>> result;
    conn_->Send(argv, [&](Result<RedisReply> r) { result = std::move(r); });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return result.has_value(); }, "reply"));
    if (!result) return Status::Internal("no reply");
    return std::move(*result);
  }
  // How often the server ran `command` ("evalsha", "eval"), from INFO commandstats.
  int Calls(const std::string& command) {
    Result<RedisReply> info = Call({"INFO", "commandstats"});
    std::string key = "cmdstat_" + command + ":calls=";
    size_t at = info->str().find(key);
    return at == std::string::npos ? 0 : std::stoi(info->str().substr(at + key.size()));
  }

  boost::asio::io_context io_;
  std::unique_ptr<RedisServerProcess> server_;
  std::unique_ptr<RedisConnection> conn_;
};

TEST_F(RedisScriptTest, Sha1IsWhatScriptLoadReturns) {
  RedisScript script("return redis.call('INCRBY', KEYS[1], ARGV[1])");
  Result<RedisReply> loaded = Call({"SCRIPT", "LOAD", script.source()});
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->str(), script.sha1());
}

TEST_F(RedisScriptTest, LoadsOnNoscriptAndRetriesOnce) {
  RedisScript script("return redis.call('INCRBY', KEYS[1], ARGV[1])");
  ASSERT_TRUE(Call({"SCRIPT", "FLUSH"}).ok());
  Result<RedisReply> first = Run(script, {"n"}, {"5"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, RedisReply::OfInteger(5));
  EXPECT_EQ(Calls("evalsha"), 1);
  EXPECT_EQ(Calls("eval"), 1);
  // Now cached: EVALSHA alone.
  EXPECT_EQ(*Run(script, {"n"}, {"2"}), RedisReply::OfInteger(7));
  EXPECT_EQ(Calls("evalsha"), 2);
  EXPECT_EQ(Calls("eval"), 1);
  // The server forgets it (restart, fail-over): loaded again.
  ASSERT_TRUE(Call({"SCRIPT", "FLUSH"}).ok());
  EXPECT_EQ(*Run(script, {"n"}, {"1"}), RedisReply::OfInteger(8));
  EXPECT_EQ(Calls("eval"), 2);
}

TEST_F(RedisScriptTest, ScriptErrorsAreErrorRepliesAndNotRetried) {
  RedisScript script("return redis.error_reply('BUSYJOB job is reserved')");
  Result<RedisReply> r = Run(script, {}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->IsErrorCode("BUSYJOB")) << r->ToString();
  EXPECT_EQ(Calls("eval"), 1);  // the NOSCRIPT fallback only
  EXPECT_EQ(*Run(script, {}, {}), *r);
  EXPECT_EQ(Calls("eval"), 1);
}

TEST_F(RedisScriptTest, ScriptMayBeDestroyedWhileRunning) {
  std::optional<Result<RedisReply>> result;
  {
    RedisScript script("return ARGV[1]");
    script.Run(*conn_, {}, {"still here"}, [&](Result<RedisReply> r) { result = std::move(r); });
  }
  ASSERT_TRUE(RunUntil(
      io_, [&] { return result.has_value(); }, "script reply"));
  EXPECT_EQ(**result, RedisReply::OfString("still here"));
}

}  // namespace
}  // namespace bulkhead
