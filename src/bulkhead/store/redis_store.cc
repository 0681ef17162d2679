// RedisStore: construction, Open and Close, what the store does when its commands' client connects
// or changes state, and the subscription's messages. How calls go out and what replies mean is
// redis_store_calls.cc; the connections are redis/redis_client.h's; the operations are in
// redis_store_ops.cc.
#include "bulkhead/store/redis_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/store/redis_taken_marks.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

constexpr std::chrono::milliseconds kStoreReplyTimeout{10000};

}  // namespace

RedisStore::RedisStore(boost::asio::io_context& io, RedisStoreOptions options)
    : io_(io),
      options_(std::move(options)),
      prefix_("{" + options_.redis_namespace + "}:"),
      jobs_key_(prefix_ + "jobs"),
      scripts_(StoreScripts::Get()),
      commands_(std::make_unique<RedisClient>(io_, ClientOptions(false))),
      subscriber_(std::make_unique<RedisClient>(io_, ClientOptions(true))) {
  commands_->SetConnectedHook(
      [this](RedisClient::DoneCallback done) { OnCommandsConnected(std::move(done)); });
  commands_->SetStateHandler(
      [this](RedisClientState state, const Status& cause) { OnCommandsState(state, cause); });
  subscriber_->SetMessageHandler([this](const std::string& channel, const std::string& message) {
    OnMessage(channel, message);
  });
  heartbeat_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
  reap_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
  taken_marks_ = std::make_unique<RedisTakenMarks>(
      RedisTakenMarks::Calls{
          .eval = [this](Script s, const char* step, std::vector<std::string> args,
                         ReplyCallback cb) { Eval(s, step, std::move(args), std::move(cb)); },
          .eval_replicated =
              [this](Script s, const char* step, std::vector<std::string> args, ReplyCallback cb) {
                EvalReplicated(s, step, std::move(args), std::move(cb));
              },
          .command = [this](const char* step, std::vector<std::string> argv,
                            ReplyCallback cb) { Command(step, std::move(argv), std::move(cb)); }},
      prefix_, options_.node_id);
}

TakenMarks& RedisStore::taken_marks() { return *taken_marks_; }

RedisStore::~RedisStore() {
  *alive_ = false;
  Close();
}

RedisClientOptions RedisStore::ClientOptions(bool subscriber) const {
  RedisClientOptions o;
  o.url = options_.url;
  o.ca_file = options_.ca_file;
  if (!subscriber) {
    o.name = "redis store";
    // A server gone silent (half-open TCP) ends the connection instead of leaving every call
    // unanswered; WAIT legitimately takes up to its timeout.
    o.reply_timeout = std::max(kStoreReplyTimeout, options_.wait_timeout + kStoreReplyTimeout);
    return o;
  }
  o.name = "redis store (wake subscription)";
  o.channels = {prefix_ + "wake", prefix_ + "hosts", prefix_ + "signals"};
  // It only waits: a PING every heartbeat interval lets the reply timeout catch a half-open socket
  // there too (lost within heartbeat_every + kStoreReplyTimeout; the reconnect re-subscribes).
  o.reply_timeout = kStoreReplyTimeout;
  o.keepalive_every = options_.heartbeat_every;
  return o;
}

void RedisStore::Close() {
  if (closed_) return;
  FlushBatch();
  stopping_ = true;
  heartbeat_timer_->cancel();
  reap_timer_->cancel();
  if (opened_ && commands_->available()) HandOverAtStop();
  CloseConnections();
}

void RedisStore::AbandonForTests() { CloseConnections(); }

void RedisStore::CloseConnections() {
  if (closed_) return;
  FlushBatch();
  closed_ = true;
  heartbeat_timer_->cancel();
  reap_timer_->cancel();
  // Pending calls get Unavailable("... closed"); the clients stay until the store goes.
  commands_->Stop();
  subscriber_->Stop();
}

Status RedisStore::RunUntilDone(const std::function<bool()>& done, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + options_.open_timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("the redis store at " + options_.url.Redacted() + " did not " +
                                 what + " within " + std::to_string(options_.open_timeout.count()) +
                                 " ms");
    }
    if (io_.stopped()) io_.restart();
    io_.run_one_until(deadline);
  }
  return Status::Ok();
}

Status RedisStore::Open() {
  auto where = [&](const Status& s) {
    return Status(s.code(),
                  "cannot open the redis store at " + options_.url.Redacted() + ": " + s.message());
  };
  opening_ = true;
  // Shared: a callback that comes after a timeout finds it still there.
  auto connected = std::make_shared<std::optional<Status>>();
  commands_->Start([connected](Status s) { *connected = std::move(s); });
  Status s = RunUntilDone([&] { return connected->has_value(); }, "connect");
  if (!s.ok()) {
    spdlog::warn("redis store: {}; starting without it and retrying", s.message());
  } else {
    s = **connected;
  }
  if (s.code() == StatusCode::kUnavailable) {
    // Unreachable: start without it; the client keeps trying, OnCommandsState finishes opening.
    opening_ = false;
    return Status::Ok();
  }
  if (!s.ok()) {
    opening_ = false;
    commands_->Stop();
    return s.code() == StatusCode::kFailedPrecondition ? s : where(s);
  }
  auto subscribed = std::make_shared<std::optional<Status>>();
  subscriber_->Start([subscribed](Status st) { *subscribed = std::move(st); });
  s = RunUntilDone([&] { return subscribed->has_value(); }, "subscribe to its wake channel");
  opening_ = false;
  if (!s.ok() || !subscribed->value().ok()) {
    subscriber_->Stop();
    return s.ok() ? where(**subscribed) : s;
  }
  started_ = true;
  StartLiveness();
  return Status::Ok();
}

void RedisStore::OnCommandsConnected(RedisClient::DoneCallback done) {
  std::weak_ptr<bool> alive = alive_;
  auto finish = [this, alive, done](Status s) {
    if (alive.expired()) return;
    if (s.code() == StatusCode::kFailedPrecondition ||
        (opening_ && !s.ok() && s.code() != StatusCode::kUnavailable)) {
      commands_->Fail(s);  // Open, or OnCommandsState, reports it
      return;
    }
    done(s);
  };
  // Ahead of every command sent once the client is available: no EVALSHA meets a server that
  // lacks its script (a NOSCRIPT retry would reorder it behind later commands).
  SendScriptLoads([this, alive, finish](Status s) {
    if (alive.expired()) return;
    if (!s.ok() || opened_) return finish(s);
    SendLayoutCheck([this, finish](Status checked) {
      if (checked.ok()) opened_ = true;
      finish(checked);
    });
  });
}

void RedisStore::OnCommandsState(RedisClientState state, const Status& cause) {
  if (opening_ || closed_) return;  // Open reports what the first attempt found
  if (state == RedisClientState::kFailed) return Fatal(cause);
  if (state != RedisClientState::kAvailable) return;
  if (!started_) {
    // Redis was unreachable at start: the hook has checked the layout; finish opening.
    started_ = true;
    subscriber_->Start();
    StartLiveness();
    return;
  }
  ReclaimLostReservations();  // the first command on the new connection
  // The alive key may be close to expiring after the outage: refresh it at once.
  Heartbeat();
}

void RedisStore::Fatal(const Status& cause) {
  // The client logged it; the owner stops.
  Status error(cause.code(), "cannot open the redis store at " + options_.url.Redacted() + ": " +
                                 cause.message());
  if (fatal_handler_) {
    boost::asio::post(io_, [handler = fatal_handler_, error, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) handler(error);
    });
  }
}

void RedisStore::SendLayoutCheck(std::function<void(Status)> done) {
  const std::string meta = prefix_ + "meta";
  RawCommand("open", {"HSETNX", meta, "layout", std::to_string(kLayoutVersion)},
             [](Result<RedisReply>) {});
  std::weak_ptr<bool> alive = alive_;
  RawCommand("open", {"HGET", meta, "layout"}, [this, alive, done](Result<RedisReply> layout) {
    if (alive.expired()) return;
    if (!layout.ok()) return done(layout.status());
    std::string found = layout->str();
    if (found != std::to_string(kLayoutVersion)) {
      return done(Status::FailedPrecondition(
          "the redis namespace \"" + options_.redis_namespace + "\" at " + options_.url.Redacted() +
          " has layout version " + (found.empty() ? "(none)" : found) +
          ", but this bulkhead reads and writes layout version " + std::to_string(kLayoutVersion) +
          ": use another redis_namespace, or the bulkhead version that wrote it"));
    }
    // Registered only in a namespace of this layout. The heartbeat writes the alive key, then
    // registers the node: no reaper finds it registered but not alive.
    RawEval(Script::kHeartbeat, "open",
            {options_.node_id, std::to_string(options_.heartbeat_ttl.count())},
            [this, alive, done](Result<RedisReply> r) {
              if (r.ok() && !alive.expired()) NoteHeartbeat(*r);  // the live node count
              done(r.ok() ? Status::Ok() : r.status());
            });
  });
}

void RedisStore::SendScriptLoads(std::function<void(Status)> done) {
  const auto& all = scripts_.all();
  auto failure = std::make_shared<Status>();
  for (size_t i = 0; i < all.size(); ++i) {
    bool last = i + 1 == all.size();
    RawCommand("load scripts", {"SCRIPT", "LOAD", all[i].source()},
               [failure, last, done](Result<RedisReply> r) {
                 if (!r.ok() && failure->ok()) *failure = r.status();
                 if (last) done(*failure);
               });
  }
}

std::string RedisStore::unavailable_reason() const {
  std::string why = commands_->unavailable_reason();
  return why.empty() ? why : "store unavailable: " + why;
}

void RedisStore::OnMessage(const std::string& channel, const std::string& message) {
  if (channel == prefix_ + "hosts") {
    OnHostsMessage(message);
  } else if (channel == prefix_ + "signals") {
    OnSignalsMessage(message);
  } else {
    OnWakeMessage(message);
  }
}

void RedisStore::OnWakeMessage(const std::string& message) {
  // "NODE N QUEUE": the queue is the rest after the second space (it may hold spaces).
  size_t a = message.find(' ');
  if (a == std::string::npos) return;
  size_t b = message.find(' ', a + 1);
  if (b == std::string::npos) return;
  if (std::string_view(message).substr(0, a) == options_.node_id) return;
  size_t count = std::strtoull(message.c_str() + a + 1, nullptr, 10);
  if (wake_handler_ && count > 0) wake_handler_(message.substr(b + 1), count);
}

void RedisStore::OnHostsMessage(const std::string& message) {
  // "NODE HOST".
  size_t a = message.find(' ');
  if (a == std::string::npos || std::string_view(message).substr(0, a) == options_.node_id) return;
  if (host_state_handler_) host_state_handler_(message.substr(a + 1));
}

void RedisStore::OnSignalsMessage(const std::string& message) {
  // "NODE STATE WID" (WID empty: every worker).
  size_t a = message.find(' ');
  if (a == std::string::npos || std::string_view(message).substr(0, a) == options_.node_id) return;
  size_t b = message.find(' ', a + 1);
  if (b == std::string::npos) return;
  if (worker_signal_handler_) {
    worker_signal_handler_(message.substr(b + 1), message.substr(a + 1, b - a - 1));
  }
}

const std::string& RedisStore::Day(TimePoint now) {
  int64_t day_number = ToUnixMicros(now) / (86'400LL * 1'000'000);
  if (day_number != day_number_) {
    day_number_ = day_number;
    day_ = FormatDate(now);
  }
  return day_;
}

}  // namespace bulkhead
