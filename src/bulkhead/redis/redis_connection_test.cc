#include "bulkhead/redis/redis_connection.h"

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <optional>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/redis/testing/run_until.h"

namespace bulkhead {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<RedisServerProcess> StartServer(RedisServerOptions options = {}) {
  Result<std::unique_ptr<RedisServerProcess>> server = RedisServerProcess::Start(options);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(*server) : nullptr;
}

class RedisConnectionTest : public ::testing::Test {
 protected:
  // Connects `conn` and returns the status Connect reported.
  Status Connect(RedisConnection& conn) {
    std::optional<Status> status;
    conn.Connect([&](Status s) { status = s; });
    EXPECT_FALSE(status.has_value()) << "Connect answered before returning";
    EXPECT_TRUE(RunUntil(
        io_, [&] { return status.has_value(); }, "Connect"));
    return status.value_or(Status::Internal("no answer"));
  }
  // Sends one command and returns its reply.
  Result<RedisReply> Call(RedisConnection& conn, std::vector<std::string> argv) {
    std::optional<Result<RedisReply>> result;
    conn.Send(std::move(argv), [&](Result<RedisReply> r) { result = std::move(r); });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return result.has_value(); }, "reply"));
    if (!result) return Status::Internal("no reply");
    return std::move(*result);
  }

  boost::asio::io_context io_;
};

TEST_F(RedisConnectionTest, PipelinesTenThousandCommandsInOrder) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  RedisConnection conn(io_, server->connect_options());
  // Sent before the connection is ready: they queue behind the handshake.
  conn.Connect([](Status s) { EXPECT_TRUE(s.ok()) << s.ToString(); });
  constexpr int kCommands = 10000;
  std::vector<int64_t> answers;
  for (int i = 0; i < kCommands; ++i) {
    conn.Send({"INCR", "counter"}, [&](Result<RedisReply> r) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(r->is_integer()) << r->ToString();
      answers.push_back(r->integer());
    });
  }
  EXPECT_TRUE(answers.empty());
  EXPECT_EQ(conn.pending(), static_cast<size_t>(kCommands));
  ASSERT_TRUE(RunUntil(
      io_, [&] { return answers.size() == kCommands; }, "10,000 replies"));
  for (int i = 0; i < kCommands; ++i) ASSERT_EQ(answers[i], i + 1) << "reply " << i;
  EXPECT_EQ(conn.pending(), 0u);
}

TEST_F(RedisConnectionTest, ErrorRepliesAreRepliesAndTheConnectionGoesOn) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  RedisConnection conn(io_, server->connect_options());
  ASSERT_TRUE(Connect(conn).ok());
  ASSERT_TRUE(Call(conn, {"SET", "k", "not a number"}).ok());
  Result<RedisReply> incr = Call(conn, {"INCR", "k"});
  ASSERT_TRUE(incr.ok()) << incr.status().ToString();
  EXPECT_TRUE(incr->is_error());
  EXPECT_TRUE(incr->IsErrorCode("ERR")) << incr->ToString();
  Result<RedisReply> unknown = Call(conn, {"NOSUCHCOMMAND"});
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->is_error()) << unknown->ToString();
  Result<RedisReply> get = Call(conn, {"GET", "k"});
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(*get, RedisReply::OfString("not a number"));
  Result<RedisReply> binary = Call(conn, {"SET", std::string("b\0in\r\n", 6), "v"});
  ASSERT_TRUE(binary.ok());
  EXPECT_TRUE(binary->Is("OK")) << binary->ToString();
}

TEST_F(RedisConnectionTest, KilledServerFailsPendingCallbacksOnceAndTheOwnerReconnects) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  uint16_t port = server->port();
  RedisConnection conn(io_, server->connect_options());
  std::vector<Status> losses;
  conn.SetLostHandler([&](const Status& cause) { losses.push_back(cause); });
  ASSERT_TRUE(Connect(conn).ok());
  // Commands that stay pending: BLPOP on an empty list blocks the connection.
  std::vector<Result<RedisReply>> results;
  conn.Send({"BLPOP", "empty", "0"}, [&](Result<RedisReply> r) { results.push_back(r); });
  conn.Send({"PING"}, [&](Result<RedisReply> r) { results.push_back(r); });
  server->Kill();
  ASSERT_TRUE(RunUntil(
      io_, [&] { return !losses.empty(); }, "lost handler"));
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(r.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(losses.size(), 1u);
  EXPECT_NE(losses[0].message().find("connection lost"), std::string::npos) << losses[0].message();
  EXPECT_TRUE(conn.idle());

  // While idle, a command fails (later, not inline).
  std::optional<Result<RedisReply>> idle_reply;
  conn.Send({"PING"}, [&](Result<RedisReply> r) { idle_reply = r; });
  EXPECT_FALSE(idle_reply.has_value());
  ASSERT_TRUE(RunUntil(
      io_, [&] { return idle_reply.has_value(); }, "idle reply"));
  EXPECT_EQ(idle_reply->status().code(), StatusCode::kUnavailable);

  // The same object reconnects once the server is back.
  Status refused = Connect(conn);
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.message().find("cannot connect"), std::string::npos) << refused.message();
  auto restarted = StartServer({.port = port});
  ASSERT_NE(restarted, nullptr);
  ASSERT_TRUE(Connect(conn).ok());
  Result<RedisReply> pong = Call(conn, {"PING"});
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_TRUE(pong->Is("PONG"));
  EXPECT_EQ(results.size(), 2u) << "a failed callback ran twice";
  EXPECT_EQ(losses.size(), 1u);
}

TEST_F(RedisConnectionTest, CloseFailsPendingWithoutTheLostHandler) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  RedisConnection conn(io_, server->connect_options());
  bool lost = false;
  conn.SetLostHandler([&](const Status&) { lost = true; });
  ASSERT_TRUE(Connect(conn).ok());
  std::optional<Result<RedisReply>> reply;
  conn.Send({"BLPOP", "empty", "0"}, [&](Result<RedisReply> r) { reply = r; });
  conn.Close();
  EXPECT_FALSE(reply.has_value());
  ASSERT_TRUE(RunUntil(
      io_, [&] { return reply.has_value(); }, "closed reply"));
  EXPECT_EQ(reply->status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(lost);
  ASSERT_TRUE(Connect(conn).ok());
  EXPECT_TRUE(Call(conn, {"PING"}).ok());
}

TEST_F(RedisConnectionTest, NoCallbackRunsAfterDestruction) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto conn = std::make_unique<RedisConnection>(io_, server->connect_options());
  ASSERT_TRUE(Connect(*conn).ok());
  int calls = 0;
  conn->SetLostHandler([&](const Status&) { ++calls; });
  conn->Send({"PING"}, [&](Result<RedisReply>) { ++calls; });
  conn->Send({"PING"}, [&](Result<RedisReply>) { ++calls; });
  conn.reset();
  // A second connection shows the loop has run long enough for replies to arrive.
  RedisConnection other(io_, server->connect_options());
  ASSERT_TRUE(Connect(other).ok());
  ASSERT_TRUE(Call(other, {"PING"}).ok());
  EXPECT_EQ(calls, 0);

  // Destroyed from inside its own callback: the remaining callbacks never run.
  conn = std::make_unique<RedisConnection>(io_, server->connect_options());
  ASSERT_TRUE(Connect(*conn).ok());
  bool first = false;
  conn->Send({"PING"}, [&](Result<RedisReply>) {
    first = true;
    conn.reset();
  });
  conn->Send({"PING"}, [&](Result<RedisReply>) { ++calls; });
  ASSERT_TRUE(RunUntil(
      io_, [&] { return first; }, "first reply"));
  ASSERT_TRUE(Call(other, {"PING"}).ok());
  EXPECT_EQ(calls, 0);
}

TEST_F(RedisConnectionTest, AuthWithPasswordAndAclUser) {
  auto server =
      StartServer({.password = "s3cret", .extra_config = {"user alice on >alicepw ~* &* +@all"}});
  ASSERT_NE(server, nullptr);
  RedisConnectOptions options = server->connect_options();
  RedisConnection conn(io_, options);
  ASSERT_TRUE(Connect(conn).ok());
  EXPECT_TRUE(Call(conn, {"PING"})->Is("PONG"));

  options.username = "alice";
  options.password = "alicepw";
  RedisConnection alice(io_, options);
  ASSERT_TRUE(Connect(alice).ok());
  Result<RedisReply> whoami = Call(alice, {"ACL", "WHOAMI"});
  ASSERT_TRUE(whoami.ok());
  EXPECT_EQ(*whoami, RedisReply::OfString("alice"));

  options.username.clear();
  options.password = "n0t-the-pa55";
  RedisConnection wrong(io_, options);
  std::optional<Result<RedisReply>> queued;
  Status s = [&] {
    std::optional<Status> status;
    wrong.Connect([&](Status st) { status = st; });
    wrong.Send({"PING"}, [&](Result<RedisReply> r) { queued = r; });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return status.has_value() && queued.has_value(); }, "AUTH"));
    return status.value_or(Status::Ok());
  }();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("AUTH failed: WRONGPASS"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("n0t-the-pa55"), std::string::npos)
      << "the password leaked: " << s.message();
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(wrong.idle());

  options.password.clear();
  RedisConnection none(io_, options);
  ASSERT_TRUE(Connect(none).ok());
  Result<RedisReply> noauth = Call(none, {"GET", "x"});
  ASSERT_TRUE(noauth.ok());
  EXPECT_TRUE(noauth->IsErrorCode("NOAUTH")) << noauth->ToString();
}

TEST_F(RedisConnectionTest, SelectsTheDb) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  RedisConnectOptions options = server->connect_options();
  options.db = 5;
  RedisConnection db5(io_, options);
  ASSERT_TRUE(Connect(db5).ok());
  ASSERT_TRUE(Call(db5, {"SET", "where", "five"}).ok());
  RedisConnection db0(io_, server->connect_options());
  ASSERT_TRUE(Connect(db0).ok());
  EXPECT_TRUE(Call(db0, {"GET", "where"})->is_nil());
  EXPECT_EQ(*Call(db0, {"SELECT", "5"}), RedisReply::OfStatus("OK"));
  EXPECT_EQ(*Call(db0, {"GET", "where"}), RedisReply::OfString("five"));

  options.db = 999;
  RedisConnection bad(io_, options);
  Status s = Connect(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("SELECT 999 failed"), std::string::npos) << s.message();
}

TEST_F(RedisConnectionTest, RefusedAndTimedOutConnects) {
  // A port that nobody listens on.
  boost::asio::ip::tcp::acceptor probe(io_, {boost::asio::ip::address_v4::loopback(), 0});
  uint16_t closed_port = probe.local_endpoint().port();
  probe.close();
  RedisConnectOptions options;
  options.endpoint = {"127.0.0.1", closed_port};
  RedisConnection refused(io_, options);
  Status s = Connect(refused);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("redis 127.0.0.1:" + std::to_string(closed_port) + ": cannot connect"),
            std::string::npos)
      << s.message();

  // A listener that accepts TCP but never speaks: the TLS handshake cannot finish.
  boost::asio::ip::tcp::acceptor silent(io_, {boost::asio::ip::address_v4::loopback(), 0});
  options.endpoint.port = silent.local_endpoint().port();
  options.tls = true;
  options.connect_timeout = milliseconds(200);
  RedisConnection timed_out(io_, options);
  s = Connect(timed_out);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("connect timed out after 200 ms"), std::string::npos) << s.message();
}

TEST_F(RedisConnectionTest, ASilentPeerEndsTheConnectionAfterTheReplyTimeout) {
  // Accepts TCP (in the kernel's backlog) and never answers.
  boost::asio::ip::tcp::acceptor silent(io_, {boost::asio::ip::address_v4::loopback(), 0});
  RedisConnectOptions options;
  options.endpoint = {"127.0.0.1", silent.local_endpoint().port()};
  options.reply_timeout = milliseconds(200);
  RedisConnection conn(io_, options);
  std::optional<Status> lost;
  conn.SetLostHandler([&](const Status& cause) { lost = cause; });
  ASSERT_TRUE(Connect(conn).ok());
  std::optional<Result<RedisReply>> reply;
  conn.Send({"PING"}, [&](Result<RedisReply> r) { reply = r; });
  ASSERT_TRUE(RunUntil(
      io_, [&] { return lost.has_value(); }, "reply timeout"));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply->status().message().find("no reply within 200 ms"), std::string::npos)
      << reply->status().message();
  EXPECT_TRUE(conn.idle());
}

TEST_F(RedisConnectionTest, SubscriberReceivesPublishedMessages) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  RedisConnection subscriber(io_, server->connect_options());
  RedisConnection publisher(io_, server->connect_options());
  ASSERT_TRUE(Connect(subscriber).ok());
  ASSERT_TRUE(Connect(publisher).ok());
  std::vector<std::pair<std::string, std::string>> messages;
  std::optional<Status> subscribed;
  subscriber.Subscribe(
      {"jobs", "breakers"},
      [&](const std::string& channel, const std::string& message) {
        messages.emplace_back(channel, message);
      },
      [&](Status s) { subscribed = s; });
  ASSERT_TRUE(RunUntil(
      io_, [&] { return subscribed.has_value(); }, "SUBSCRIBE"));
  ASSERT_TRUE(subscribed->ok()) << subscribed->ToString();

  Result<RedisReply> receivers = Call(publisher, {"PUBLISH", "jobs", "pushed"});
  EXPECT_EQ(*receivers, RedisReply::OfInteger(1));
  Call(publisher, {"PUBLISH", "other", "ignored"});
  Call(publisher, {"PUBLISH", "breakers", "open"});
  ASSERT_TRUE(RunUntil(
      io_, [&] { return messages.size() == 2; }, "two messages"));
  EXPECT_EQ(messages[0], std::make_pair(std::string("jobs"), std::string("pushed")));
  EXPECT_EQ(messages[1], std::make_pair(std::string("breakers"), std::string("open")));

  Result<RedisReply> refused = Call(subscriber, {"GET", "x"});
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
}

// A subscriber sends nothing but PING: with keepalive_every, a healthy server answers each
// and the subscription carries on; a server that stops answering (CLIENT PAUSE: the socket stays
// open, as when it is half-open) ends the connection after the reply timeout.
TEST_F(RedisConnectionTest, ASubscriberPingsAndASilentServerEndsIt) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  RedisConnectOptions options = server->connect_options();
  options.keepalive_every = milliseconds(50);
  options.reply_timeout = milliseconds(300);
  RedisConnection subscriber(io_, options);
  RedisConnection publisher(io_, server->connect_options());
  std::optional<Status> lost;
  subscriber.SetLostHandler([&](const Status& cause) { lost = cause; });
  ASSERT_TRUE(Connect(subscriber).ok());
  ASSERT_TRUE(Connect(publisher).ok());
  std::vector<std::string> messages;
  std::optional<Status> subscribed;
  subscriber.Subscribe(
      {"wake"}, [&](const std::string&, const std::string& m) { messages.push_back(m); },
      [&](Status s) { subscribed = s; });
  ASSERT_TRUE(RunUntil(
      io_, [&] { return subscribed.has_value(); }, "SUBSCRIBE"));
  ASSERT_TRUE(subscribed->ok()) << subscribed->ToString();

  // Each PING is sent by a timer handler and answered by a read handler: the condition sees it
  // pending, then answered.
  int answered = 0;
  bool was_pending = false;
  ASSERT_TRUE(RunUntil(
      io_,
      [&] {
        const bool pending = subscriber.pending() > 0;
        if (was_pending && !pending) ++answered;
        was_pending = pending;
        return answered >= 5 || lost.has_value();
      },
      "five PINGs answered"));
  EXPECT_FALSE(lost.has_value()) << "answered PINGs keep it up: " << lost->ToString();
  EXPECT_TRUE(Call(publisher, {"PUBLISH", "wake", "after pings"}).ok());
  ASSERT_TRUE(RunUntil(
      io_, [&] { return messages.size() == 1; }, "a message after the PINGs"));
  EXPECT_EQ(messages[0], "after pings");
  Result<RedisReply> pong = Call(subscriber, {"ping"});
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(
      pong->ToString(),
      RedisReply::OfArray({RedisReply::OfString("pong"), RedisReply::OfString("")}).ToString());

  // The server stops answering without closing the socket.
  ASSERT_TRUE(Call(publisher, {"CLIENT", "PAUSE", "1000", "ALL"}).ok());
  ASSERT_TRUE(RunUntil(
      io_, [&] { return lost.has_value(); }, "the silent server noticed", milliseconds(2000)));
  EXPECT_NE(lost->message().find("no reply within 300 ms"), std::string::npos) << lost->message();
  EXPECT_TRUE(subscriber.idle());
  Call(publisher, {"CLIENT", "UNPAUSE"});
}

}  // namespace
}  // namespace bulkhead
