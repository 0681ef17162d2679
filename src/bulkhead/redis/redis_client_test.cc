// RedisClient against real redis-server and redis-sentinel processes. The reconnect waits are
// measured by a SimulatedClock where a test counts them, so no test waits for a backoff.
#include "bulkhead/redis/redis_client.h"

#include <gtest/gtest.h>

#include <optional>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/redis/testing/run_until.h"
#include "bulkhead/util/simulated_clock.h"
#include "bulkhead/util/testing/log_capture.h"

namespace bulkhead {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using State = RedisClientState;

std::unique_ptr<RedisServerProcess> LaunchServer(RedisServerOptions options = {}) {
  Result<std::unique_ptr<RedisServerProcess>> server = RedisServerProcess::Start(options);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(*server) : nullptr;
}

// A loopback port nothing listens on: a server started and stopped.
uint16_t UnusedPort() {
  auto probe = LaunchServer();
  return probe ? probe->port() : 0;
}

class RedisClientTest : public ::testing::Test {
 protected:
  RedisClientOptions Options(const std::string& url) {
    Result<RedisUrl> parsed = ParseRedisUrl(url);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    RedisClientOptions o;
    if (parsed.ok()) o.url = *parsed;
    o.name = "test client";
    o.clock = &clock_;
    return o;
  }
  // A client on `url` whose state changes are recorded in states_.
  std::unique_ptr<RedisClient> Client(RedisClientOptions options) {
    auto client = std::make_unique<RedisClient>(io_, std::move(options));
    client->SetStateHandler([this](State s, const Status&) { states_.push_back(s); });
    return client;
  }
  // Starts `client` and returns the first attempt's outcome.
  Status Start(RedisClient& client) {
    std::optional<Status> first;
    client.Start([&](Status s) { first = s; });
    EXPECT_FALSE(first.has_value()) << "answered inside Start";
    EXPECT_TRUE(RunUntil(
        io_, [&] { return first.has_value(); }, "the first attempt", seconds(20)));
    return first.value_or(Status::Internal("no answer"));
  }
  Result<RedisReply> Call(RedisClient& client, std::vector<std::string> argv) {
    std::optional<Result<RedisReply>> result;
    client.Send(argv, [&](Result<RedisReply> r) { result = std::move(r); });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return result.has_value(); }, "reply to " + argv[0]));
    if (!result) return Status::Internal("no reply");
    return std::move(*result);
  }
  // Moves the clock to the pending reconnect wait, returns how long that wait was, and runs the
  // loop until the attempt it starts has ended (the next wait is pending, or the client is up).
  milliseconds NextRetry(RedisClient& client) {
    std::optional<TimePoint> at = clock_.NextDeadline();
    EXPECT_TRUE(at.has_value()) << "no reconnect wait pending";
    if (!at) return milliseconds(0);
    auto wait = std::chrono::duration_cast<milliseconds>(*at - clock_.Now());
    clock_.Advance(*at - clock_.Now());
    EXPECT_TRUE(RunUntil(
        io_, [&] { return clock_.NextDeadline().has_value() || client.available(); },
        "the reconnect attempt ends", seconds(20)));
    return wait;
  }

  SimulatedClock clock_;  // before the clients: their timers go first
  boost::asio::io_context io_;
  std::vector<State> states_;
};

TEST_F(RedisClientTest, TheHookRunsBeforeTheClientIsAvailableAndCallsGoThroughAfter) {
  auto server = LaunchServer();
  ASSERT_NE(server, nullptr);
  auto client = Client(Options(server->url()));
  std::optional<Result<RedisReply>> early;
  client->Send({"PING"}, [&](Result<RedisReply> r) { early = std::move(r); });
  ASSERT_TRUE(RunUntil(
      io_, [&] { return early.has_value(); }, "PING before Start"));
  EXPECT_EQ(early->status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(early->status().message(),
            "redis://" + server->endpoint().ToString() + "/0: not connected");

  std::optional<Result<RedisReply>> during_hook;
  client->SetConnectedHook([&](RedisClient::DoneCallback done) {
    EXPECT_FALSE(client->available());
    client->Send({"PING"}, [&](Result<RedisReply> r) { during_hook = std::move(r); });
    client->SendRaw({"SET", "set-up", "yes"}, [done](Result<RedisReply> r) {
      done(r.ok() && r->Is("OK") ? Status::Ok() : Status::Internal("SET failed"));
    });
  });
  ASSERT_TRUE(Start(*client).ok());
  EXPECT_EQ(states_, std::vector<State>{State::kAvailable});
  EXPECT_TRUE(client->unavailable_reason().empty());
  ASSERT_TRUE(during_hook.has_value());
  EXPECT_EQ(during_hook->status().code(), StatusCode::kUnavailable)
      << "an ordinary call waits for the hook";
  Result<RedisReply> got = Call(*client, {"GET", "set-up"});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->str(), "yes");
  Result<RedisReply> error = Call(*client, {"INCR", "set-up"});
  ASSERT_TRUE(error.ok()) << "an error reply is a reply";
  EXPECT_TRUE(error->is_error());
  EXPECT_EQ(client->endpoint(), server->endpoint());
}

TEST_F(RedisClientTest, AKilledServerIsReconnectedWithOneStateChangeAndOneLogLineEachWay) {
  auto server = LaunchServer();
  ASSERT_NE(server, nullptr);
  const uint16_t port = server->port();
  RedisClientOptions options = Options(server->url());
  options.backoff = {.first = milliseconds(100), .cap = milliseconds(400)};
  auto client = Client(options);
  int hooks = 0;
  client->SetConnectedHook([&](RedisClient::DoneCallback done) {
    ++hooks;
    done(Status::Ok());
  });
  LogCapture log;
  ASSERT_TRUE(Start(*client).ok());

  server->Kill();
  ASSERT_TRUE(RunUntil(
      io_, [&] { return !client->available(); }, "the loss is noticed"));
  EXPECT_EQ(states_, (std::vector<State>{State::kAvailable, State::kDown}));
  std::string reason = client->unavailable_reason();
  EXPECT_EQ(reason.rfind("redis 127.0.0.1:" + std::to_string(port) + ": ", 0), 0u) << reason;
  EXPECT_TRUE(reason.ends_with(", retrying")) << reason;
  // Answered from the loop's queue: no server, no timer is waited for.
  std::optional<Result<RedisReply>> refused;
  client->Send({"PING"}, [&](Result<RedisReply> r) { refused = std::move(r); });
  EXPECT_FALSE(refused.has_value());
  io_.restart();
  io_.poll();
  ASSERT_TRUE(refused.has_value()) << "answered without waiting";
  EXPECT_EQ(refused->status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused->status().message(), client->unavailable_reason());

  // Three attempts fail (100, 200, 400 ms of backoff): no state change, no log line.
  EXPECT_EQ(NextRetry(*client), milliseconds(100));
  EXPECT_EQ(NextRetry(*client), milliseconds(200));
  EXPECT_EQ(NextRetry(*client), milliseconds(400));
  EXPECT_EQ(states_.size(), 2u);

  auto again = LaunchServer({.port = port});
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(NextRetry(*client), milliseconds(400)) << "the cap";
  ASSERT_TRUE(client->available()) << client->unavailable_reason();
  EXPECT_EQ(states_, (std::vector<State>{State::kAvailable, State::kDown, State::kAvailable}));
  EXPECT_EQ(hooks, 2) << "the hook runs on every connection";
  EXPECT_EQ(log.Count("test client: the connection to redis://127.0.0.1:" + std::to_string(port) +
                      "/0 was lost ("),
            1u)
      << log.text();
  EXPECT_EQ(log.Count("test client: the connection to redis://127.0.0.1:" + std::to_string(port) +
                      "/0 is back"),
            1u)
      << log.text();
  Result<RedisReply> pong = Call(*client, {"PING"});
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();

  // Connected, the backoff starts over.
  again->Kill();
  ASSERT_TRUE(RunUntil(
      io_, [&] { return !client->available(); }, "the second loss"));
  EXPECT_EQ(NextRetry(*client), milliseconds(100));
}

TEST_F(RedisClientTest, UnreachableAtStartItRetriesAndConnectsWhenTheServerComes) {
  const uint16_t port = UnusedPort();
  auto client = Client(Options("redis://:pass-never-logged@127.0.0.1:" + std::to_string(port)));
  LogCapture log;
  Status first = Start(*client);
  EXPECT_EQ(first.code(), StatusCode::kUnavailable) << first.ToString();
  EXPECT_EQ(client->state(), State::kDown);
  EXPECT_EQ(states_, std::vector<State>{State::kDown});
  std::string reason = client->unavailable_reason();
  EXPECT_NE(reason.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << reason;
  EXPECT_EQ(reason.find("pass-never-logged"), std::string::npos) << reason;
  NextRetry(*client);
  NextRetry(*client);
  auto server = LaunchServer({.port = port, .password = "pass-never-logged"});
  ASSERT_NE(server, nullptr);
  NextRetry(*client);
  ASSERT_TRUE(client->available()) << client->unavailable_reason();
  EXPECT_EQ(states_, (std::vector<State>{State::kDown, State::kAvailable}));
  EXPECT_EQ(log.Count("is unreachable"), 1u) << log.text();
  EXPECT_EQ(log.Count("test client: connected to redis://:***@127.0.0.1:"), 1u) << log.text();
  EXPECT_EQ(log.text().find("pass-never-logged"), std::string::npos) << log.text();
}

TEST_F(RedisClientTest, AWrongPasswordIsPermissionDeniedAndNotRetried) {
  auto server = LaunchServer({.password = "right-pass-3"});
  ASSERT_NE(server, nullptr);
  auto client = Client(Options("redis://:wrong-pass-9@" + server->endpoint().ToString()));
  Status first = Start(*client);
  EXPECT_EQ(first.code(), StatusCode::kPermissionDenied) << first.ToString();
  EXPECT_EQ(client->state(), State::kFailed);
  EXPECT_EQ(states_, std::vector<State>{State::kFailed});
  EXPECT_FALSE(clock_.NextDeadline().has_value()) << "no retry pending";
  std::string reason = client->unavailable_reason();
  EXPECT_NE(reason.find(server->endpoint().ToString()), std::string::npos) << reason;
  EXPECT_EQ(reason.find("wrong-pass-9"), std::string::npos) << reason;
  Result<RedisReply> refused = Call(*client, {"PING"});
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().message(), reason);
}

TEST_F(RedisClientTest, AReadOnlyReplyReconnectsUntilTheServerIsAPrimaryAgain) {
  auto server = LaunchServer();
  auto other = LaunchServer();
  ASSERT_TRUE(server && other);
  auto client = Client(Options(server->url()));
  // The owner's check that it reached a primary (a Sentinel URL's resolver checks ROLE itself).
  client->SetConnectedHook([&](RedisClient::DoneCallback done) {
    client->SendRaw({"ROLE"}, [done](Result<RedisReply> r) {
      if (!r.ok()) return done(r.status());
      bool primary = r->is_array() && !r->elements().empty() && r->elements()[0].Is("master");
      done(primary ? Status::Ok() : Status::Unavailable("not a primary"));
    });
  });
  ASSERT_TRUE(Start(*client).ok());
  ASSERT_TRUE(Call(*client, {"SET", "k", "1"}).ok());

  // Demoted by hand: its clients stay connected, and a write answers READONLY.
  auto demoted = BlockingRedisCommand(server->connect_options(),
                                      {"REPLICAOF", "127.0.0.1", std::to_string(other->port())});
  ASSERT_TRUE(demoted.ok() && !demoted->is_error());
  Result<RedisReply> write = Call(*client, {"SET", "k", "2"});
  ASSERT_TRUE(write.ok()) << write.status().ToString();
  EXPECT_TRUE(write->IsErrorCode("READONLY")) << write->ToString();
  EXPECT_FALSE(client->available());
  EXPECT_EQ(states_, (std::vector<State>{State::kAvailable, State::kDown}));
  EXPECT_NE(client->unavailable_reason().find(server->endpoint().ToString() +
                                              " answered READONLY (a replica now), retrying"),
            std::string::npos)
      << client->unavailable_reason();
  EXPECT_EQ(NextRetry(*client), milliseconds(100));
  EXPECT_EQ(client->unavailable_reason(), "not a primary, retrying");

  auto promoted = BlockingRedisCommand(server->connect_options(), {"REPLICAOF", "NO", "ONE"});
  ASSERT_TRUE(promoted.ok() && !promoted->is_error());
  NextRetry(*client);
  ASSERT_TRUE(client->available()) << client->unavailable_reason();
  Result<RedisReply> again = Call(*client, {"SET", "k", "3"});
  ASSERT_TRUE(again.ok() && again->Is("OK")) << (again.ok() ? again->ToString() : "");
  EXPECT_EQ(states_, (std::vector<State>{State::kAvailable, State::kDown, State::kAvailable}));
}

TEST_F(RedisClientTest, ASubscriberIsSubscribedAgainAfterAServerRestart) {
  auto server = LaunchServer();
  ASSERT_NE(server, nullptr);
  const uint16_t port = server->port();
  RedisClientOptions options = Options(server->url());
  options.channels = {"ch-one", "ch-two"};
  auto client = Client(options);
  std::vector<std::string> heard;
  client->SetMessageHandler([&](const std::string& channel, const std::string& message) {
    heard.push_back(channel + " " + message);
  });
  ASSERT_TRUE(Start(*client).ok());
  ASSERT_TRUE(BlockingRedisCommand(server->connect_options(), {"PUBLISH", "ch-one", "a"}).ok());
  ASSERT_TRUE(RunUntil(
      io_, [&] { return heard.size() == 1; }, "the first message"));

  server->Kill();
  ASSERT_TRUE(RunUntil(
      io_, [&] { return !client->available(); }, "the loss is noticed"));
  auto again = LaunchServer({.port = port});
  ASSERT_NE(again, nullptr);
  NextRetry(*client);
  ASSERT_TRUE(client->available()) << client->unavailable_reason();
  ASSERT_TRUE(BlockingRedisCommand(again->connect_options(), {"PUBLISH", "ch-two", "b"}).ok());
  ASSERT_TRUE(RunUntil(
      io_, [&] { return heard.size() == 2; }, "a message after the restart"));
  EXPECT_EQ(heard, (std::vector<std::string>{"ch-one a", "ch-two b"}));
  Result<RedisReply> pong = Call(*client, {"PING"});
  ASSERT_TRUE(pong.ok()) << "PING is allowed to a subscriber: " << pong.status().ToString();
}

TEST_F(RedisClientTest, StopEndsTheWaitAndTheAttemptInFlight) {
  const uint16_t port = UnusedPort();
  auto client = Client(Options("redis://127.0.0.1:" + std::to_string(port)));
  ASSERT_EQ(Start(*client).code(), StatusCode::kUnavailable);
  ASSERT_TRUE(clock_.NextDeadline().has_value());
  client->Stop();
  EXPECT_EQ(client->state(), State::kStopped);
  EXPECT_FALSE(clock_.NextDeadline().has_value()) << "the wait is cancelled";
  clock_.Advance(seconds(60));
  io_.restart();
  io_.run_for(seconds(10));  // returns once nothing is left to run
  EXPECT_EQ(states_, std::vector<State>{State::kDown}) << "nothing after Stop";
  Result<RedisReply> refused = Call(*client, {"PING"});
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);

  // Stopped while connecting: the first-attempt callback and the state handler never run.
  auto server = LaunchServer();
  ASSERT_NE(server, nullptr);
  auto other = Client(Options(server->url()));
  bool answered = false;
  other->Start([&](Status) { answered = true; });
  other->Stop();
  io_.restart();
  io_.run_for(seconds(10));
  EXPECT_FALSE(answered);
  EXPECT_EQ(states_, std::vector<State>{State::kDown});
  // And it starts again.
  ASSERT_TRUE(Start(*other).ok());
  EXPECT_EQ(states_, (std::vector<State>{State::kDown, State::kAvailable}));
}

// A primary with a replica in sync, known to one Sentinel.
class RedisClientSentinelTest : public RedisClientTest {
 protected:
  void SetUp() override {
    primary_ = LaunchServer();
    ASSERT_NE(primary_, nullptr);
    replica_ = LaunchServer({.replica_of = primary_->endpoint()});
    ASSERT_NE(replica_, nullptr);
    Status synced = WaitFor(
        [&] {
          auto info = BlockingRedisCommand(replica_->connect_options(), {"INFO", "replication"});
          return info.ok() && info->str().find("master_link_status:up") != std::string::npos;
        },
        seconds(20), "the replica syncs with the primary");
    ASSERT_TRUE(synced.ok()) << synced.ToString();
    auto sentinel = RedisServerProcess::StartSentinel({.primary = primary_->endpoint()});
    ASSERT_TRUE(sentinel.ok()) << sentinel.status().ToString();
    sentinel_ = std::move(*sentinel);
    Status knows = WaitFor(
        [&] {
          auto r = BlockingRedisCommand(sentinel_->connect_options(),
                                        {"SENTINEL", "REPLICAS", "mymaster"});
          return r.ok() && r->is_array() && !r->elements().empty();
        },
        seconds(30), "the Sentinel discovers the replica");
    ASSERT_TRUE(knows.ok()) << knows.ToString();
  }

  std::unique_ptr<RedisServerProcess> primary_, replica_, sentinel_;
};

TEST_F(RedisClientSentinelTest, FollowsTheSentinelsToThePromotedReplica) {
  RedisClientOptions options =
      Options("redis-sentinel://" + sentinel_->endpoint().ToString() + "/mymaster");
  options.clock = nullptr;  // the fail-over takes real seconds: real backoff waits
  auto client = Client(options);
  ASSERT_TRUE(Start(*client).ok());
  EXPECT_EQ(client->endpoint(), primary_->endpoint());
  ASSERT_TRUE(Call(*client, {"SET", "before", "1"}).ok());

  primary_->Kill();
  ASSERT_TRUE(RunUntil(
      io_, [&] { return !client->available(); }, "the loss is noticed"));
  ASSERT_TRUE(RunUntil(
      io_, [&] { return client->available(); }, "the promoted replica is reached", seconds(60)))
      << client->unavailable_reason() << "\n"
      << sentinel_->LogTail();
  EXPECT_EQ(client->endpoint(), replica_->endpoint());
  Result<RedisReply> write = Call(*client, {"SET", "after", "1"});
  ASSERT_TRUE(write.ok() && write->Is("OK")) << (write.ok() ? write->ToString() : "");
  EXPECT_EQ(states_, (std::vector<State>{State::kAvailable, State::kDown, State::kAvailable}));
}

}  // namespace
}  // namespace bulkhead
