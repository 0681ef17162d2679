// RedisStore: construction, Open, the connections (reconnect, wake subscription) and how replies
// map to Status. The operations are in redis_store_ops.cc.
#include "bulkhead/store/redis_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "bulkhead/store/redis_scripts.h"
#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};
constexpr std::chrono::milliseconds kReplyTimeout{10000};

}  // namespace

RedisStore::RedisStore(boost::asio::io_context& io, RedisStoreOptions options)
    : io_(io),
      options_(std::move(options)),
      prefix_("{" + options_.redis_namespace + "}:"),
      jobs_key_(prefix_ + "jobs"),
      scripts_(std::make_unique<Scripts>()),
      unavailable_reason_("store unavailable: the redis store at " + options_.url.Redacted() +
                          " is not open") {
  for (int i = 0; i < 2; ++i) {
    reconnect_timer_[i] = std::make_unique<boost::asio::steady_timer>(io_);
    backoff_[i] = kFirstBackoff;
  }
  heartbeat_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
  reap_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
}

RedisStore::~RedisStore() {
  *alive_ = false;
  Close();
}

void RedisStore::Close() {
  if (closed_) return;
  FlushBatch();
  stopping_ = true;
  heartbeat_timer_->cancel();
  reap_timer_->cancel();
  if (opened_ && conn_ && conn_->ready()) HandOverAtStop();
  CloseConnections();
}

void RedisStore::AbandonForTests() { CloseConnections(); }

void RedisStore::CloseConnections() {
  if (closed_) return;
  FlushBatch();
  closed_ = true;
  heartbeat_timer_->cancel();
  reap_timer_->cancel();
  for (auto& timer : reconnect_timer_) timer->cancel();
  // Pending calls get Unavailable("... closed") from Close; the objects stay until the store goes.
  if (conn_) conn_->Close();
  if (sub_) sub_->Close();
}

RedisConnectOptions RedisStore::ConnectOptions(bool subscriber,
                                               const RedisEndpoint& endpoint) const {
  RedisConnectOptions o = RedisConnectOptions::ForUrl(options_.url, endpoint);
  o.tls_ca_file = options_.ca_file;
  // A server gone silent (half-open TCP) ends the command connection instead of leaving every
  // call unanswered; WAIT legitimately takes up to its timeout.
  if (!subscriber) o.reply_timeout = std::max(kReplyTimeout, options_.wait_timeout + kReplyTimeout);
  // The subscriber only waits: a PING every heartbeat interval lets the reply timeout catch a
  // half-open socket there too (lost within heartbeat_every + kReplyTimeout; the reconnect
  // re-subscribes).
  if (subscriber) {
    o.reply_timeout = kReplyTimeout;
    o.keepalive_every = options_.heartbeat_every;
  }
  return o;
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
  // Shared: a callback that comes after a timeout finds it still there.
  auto connected = std::make_shared<std::optional<Status>>();
  Connect(false, [connected](Status s) { *connected = std::move(s); });
  Status s = RunUntilDone([&] { return connected->has_value(); }, "connect");
  if (s.ok()) s = **connected;
  if (s.code() == StatusCode::kUnavailable) {
    // Unreachable: start without it; the reconnect loop finishes opening (FinishLateOpen).
    SetUnavailable("store unavailable: " + s.message() + ", retrying");
    spdlog::warn("redis store: {} is unreachable ({}); starting without it and retrying",
                 options_.url.Redacted(), s.message());
    ScheduleReconnect(false);
    return Status::Ok();
  }
  if (!s.ok()) return where(s);
  auto checked = std::make_shared<std::optional<Status>>();
  SendLayoutCheck([checked](Status st) { *checked = std::move(st); });
  s = RunUntilDone([&] { return checked->has_value(); }, "answer the layout check");
  if (!s.ok()) return s;
  if (!checked->value().ok()) return **checked;
  opened_ = true;
  SetAvailable();
  auto subscribed = std::make_shared<std::optional<Status>>();
  Connect(true, [subscribed](Status st) { *subscribed = std::move(st); });
  s = RunUntilDone([&] { return subscribed->has_value(); }, "subscribe to its wake channel");
  if (!s.ok()) return s;
  if (!subscribed->value().ok()) return where(**subscribed);
  StartLiveness();
  return Status::Ok();
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
    RawEval(scripts_->heartbeat, "open",
            {options_.node_id, std::to_string(options_.heartbeat_ttl.count())},
            [this, alive, done](Result<RedisReply> r) {
              if (r.ok() && !alive.expired()) NoteHeartbeat(*r);  // the live node count
              done(r.ok() ? Status::Ok() : r.status());
            });
  });
}

void RedisStore::FinishLateOpen() {
  std::weak_ptr<bool> alive = alive_;
  SendLayoutCheck([this, alive](Status s) {
    if (alive.expired() || closed_) return;
    if (s.code() == StatusCode::kFailedPrecondition) {
      Fatal(Status(s.code(), "cannot open the redis store at " + options_.url.Redacted() + ": " +
                                 s.message()));
      return;
    }
    if (!s.ok()) {
      // The connection went (the lost handler reconnects) or Redis refused a step: try again.
      SetUnavailable(s.message() + ", retrying");
      if (conn_ && conn_->ready()) conn_->Close();
      ScheduleReconnect(false);
      return;
    }
    opened_ = true;
    SetAvailable();
    spdlog::info("redis store: connected to {}; the store is available", options_.url.Redacted());
    ScheduleReconnect(true);  // the wake subscription
    StartLiveness();
  });
}

void RedisStore::Fatal(const Status& error) {
  fatal_ = true;
  SetUnavailable("store unavailable: " + error.message());
  spdlog::error("redis store: {}", error.message());
  for (auto& timer : reconnect_timer_) timer->cancel();
  if (conn_) conn_->Close();
  if (fatal_handler_) {
    boost::asio::post(io_, [handler = fatal_handler_, error, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) handler(error);
    });
  }
}

std::string RedisStore::unavailable_reason() const {
  std::lock_guard lock(unavailable_mu_);
  return unavailable_reason_;
}

void RedisStore::SetUnavailable(std::string reason) {
  available_ = false;
  std::lock_guard lock(unavailable_mu_);
  unavailable_reason_ = std::move(reason);
}

void RedisStore::SetAvailable() {
  available_ = true;
  std::lock_guard lock(unavailable_mu_);
  unavailable_reason_.clear();
}

void RedisStore::SendScriptLoads(std::function<void(Status)> done) {
  auto all = scripts_->All();
  auto failure = std::make_shared<Status>();
  for (size_t i = 0; i < all.size(); ++i) {
    bool last = i + 1 == all.size();
    RawCommand("load scripts", {"SCRIPT", "LOAD", all[i]->source()},
               [failure, last, done](Result<RedisReply> r) {
                 if (!r.ok() && failure->ok()) *failure = r.status();
                 if (last) done(*failure);
               });
  }
}

void RedisStore::Connect(bool subscriber, std::function<void(Status)> done) {
  if (options_.url.scheme != RedisUrl::Scheme::kSentinel) {
    ConnectTo(subscriber, options_.url.endpoints.front(), std::move(done));
    return;
  }
  int i = subscriber ? 1 : 0;
  if (!resolver_[i]) resolver_[i] = std::make_unique<SentinelResolver>(io_, options_.url);
  resolver_[i]->Resolve([this, subscriber, done](Result<RedisEndpoint> primary) {
    if (!primary.ok()) {
      done(primary.status());
      return;
    }
    ConnectTo(subscriber, *primary, done);
  });
}

void RedisStore::ConnectTo(bool subscriber, const RedisEndpoint& endpoint,
                           std::function<void(Status)> done_once) {
  // The handshake's failure and the script loads' (queued behind it) would both report: the
  // first wins.
  auto pending = std::make_shared<std::function<void(Status)>>(std::move(done_once));
  auto done = [pending](Status s) {
    if (!*pending) return;
    auto f = std::move(*pending);
    *pending = nullptr;
    f(std::move(s));
  };
  std::unique_ptr<RedisConnection>& conn = subscriber ? sub_ : conn_;
  if (!conn || !(conn->options().endpoint == endpoint) || !conn->idle()) {
    if (conn) {
      // Answers it already posted (Unavailable) still run: the object goes after them.
      std::shared_ptr<RedisConnection> old(conn.release());
      boost::asio::post(io_, [old] {});
    }
    conn = std::make_unique<RedisConnection>(io_, ConnectOptions(subscriber, endpoint));
    conn->SetLostHandler([this, subscriber](const Status& cause) { OnLost(subscriber, cause); });
  }
  std::weak_ptr<bool> alive = alive_;
  conn->Connect([this, alive, subscriber, done](Status s) {
    if (alive.expired()) return;
    if (!s.ok()) {
      done(s);
      return;
    }
    if (subscriber) {
      sub_->Subscribe(
          {prefix_ + "wake", prefix_ + "hosts", prefix_ + "signals"},
          [this](const std::string& channel, const std::string& message) {
            if (channel == prefix_ + "hosts") {
              OnHostsMessage(message);
            } else if (channel == prefix_ + "signals") {
              OnSignalsMessage(message);
            } else {
              OnWakeMessage(message);
            }
          },
          done);
    }
  });
  // Queued behind the handshake, so ahead of every command sent from now on: no EVALSHA meets a
  // server that lacks its script (a NOSCRIPT retry would reorder it behind later commands).
  if (!subscriber) SendScriptLoads(done);
}

void RedisStore::OnLost(bool subscriber, const Status& cause) {
  if (closed_ || fatal_) return;
  if (!subscriber) SetUnavailable("store unavailable: " + cause.message() + ", retrying");
  spdlog::warn("redis store: the {} connection to {} was lost ({}); reconnecting",
               subscriber ? "wake subscription" : "command", options_.url.Redacted(),
               cause.message());
  ScheduleReconnect(subscriber);
}

void RedisStore::ScheduleReconnect(bool subscriber) {
  int i = subscriber ? 1 : 0;
  if (closed_ || fatal_ || reconnecting_[i]) return;
  reconnecting_[i] = true;
  reconnect_timer_[i]->expires_after(backoff_[i]);
  backoff_[i] = std::min(backoff_[i] * 2, kMaxBackoff);
  std::weak_ptr<bool> alive = alive_;
  reconnect_timer_[i]->async_wait([this, alive, subscriber, i](boost::system::error_code ec) {
    if (ec || alive.expired() || closed_ || fatal_) return;
    Connect(subscriber, [this, alive, subscriber, i](Status s) {
      if (alive.expired() || closed_ || fatal_) return;
      reconnecting_[i] = false;
      if (s.ok()) {
        backoff_[i] = kFirstBackoff;
        if (!subscriber && !opened_) {
          FinishLateOpen();
          return;
        }
        if (!subscriber) {
          SetAvailable();
          ReclaimLostReservations();  // the first command on the new connection
        }
        spdlog::info("redis store: the {} connection to {} is back",
                     subscriber ? "wake subscription" : "command", options_.url.Redacted());
        // The alive key may be close to expiring after the outage: refresh it at once.
        if (!subscriber) Heartbeat();
        return;
      }
      if (!opened_ &&
          (s.code() == StatusCode::kPermissionDenied || s.code() == StatusCode::kInvalidArgument)) {
        Fatal(Status(s.code(), "cannot open the redis store at " + options_.url.Redacted() + ": " +
                                   s.message()));
        return;
      }
      // Still down: the reason names the latest cause; nothing is logged per attempt.
      if (!subscriber) SetUnavailable("store unavailable: " + s.message() + ", retrying");
      ScheduleReconnect(subscriber);
    });
  });
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

void RedisStore::OnReadOnly() {
  // The server was demoted (a fail-over): find the new primary. Close answers what is pending
  // (Unavailable) and does not run the lost handler, so the reconnect starts here.
  if (closed_ || !conn_ || conn_->idle()) return;
  spdlog::warn("redis store: {} answered READONLY (a replica now); looking for the primary",
               conn_->options().endpoint.ToString());
  SetUnavailable("store unavailable: " + conn_->options().endpoint.ToString() +
                 " answered READONLY (a replica now), retrying");
  conn_->Close();
  ScheduleReconnect(false);
}

Status RedisStore::ReplyError(const Result<RedisReply>& r, const char* step) {
  if (!r.ok()) return Status::Unavailable("store unavailable: " + r.status().message());
  if (!r->is_error()) return Status::Ok();
  const std::string& text = r->str();
  if (r->IsErrorCode("READONLY")) return Status::Unavailable("store unavailable: " + text);
  if (r->IsErrorCode("OOM") || text.find("OOM command not allowed") != std::string::npos) {
    return Status::ResourceExhausted("redis refused the " + std::string(step) + ": " + text);
  }
  return Status::Internal("redis store " + std::string(step) + " failed: " + text);
}

void RedisStore::Command(const char* step, std::vector<std::string> argv, ReplyCallback cb) {
  FlushBatch();
  if (exclusive_) {
    held_.push_back([this, step, argv = std::move(argv), cb = std::move(cb)]() mutable {
      Command(step, std::move(argv), std::move(cb));
    });
    return;
  }
  SendCommand(step, std::move(argv), std::move(cb));
}

void RedisStore::Eval(const RedisScript& script, const char* step, std::vector<std::string> args,
                      ReplyCallback cb) {
  FlushBatch();
  if (exclusive_) {
    held_.push_back([this, &script, step, args = std::move(args), cb = std::move(cb)]() mutable {
      Eval(script, step, std::move(args), std::move(cb));
    });
    return;
  }
  SendEval(script, step, std::move(args), std::move(cb));
}

void RedisStore::ReleaseHeld() {
  exclusive_ = false;
  while (!exclusive_ && !held_.empty()) {
    auto call = std::move(held_.front());
    held_.pop_front();
    call();
  }
}

void RedisStore::AnswerUnavailable(ReplyCallback cb) {
  boost::asio::post(io_, [cb = std::move(cb), reason = unavailable_reason()] {
    cb(Status::Unavailable(reason));
  });
}

void RedisStore::SendCommand(const char* step, std::vector<std::string> argv, ReplyCallback cb) {
  FlushBatch();
  if (!available_) return AnswerUnavailable(std::move(cb));
  RawCommand(step, std::move(argv), std::move(cb));
}

void RedisStore::RawCommand(const char* step, std::vector<std::string> argv, ReplyCallback cb) {
  FlushBatch();
  if (!conn_) return AnswerUnavailable(std::move(cb));
  conn_->Send(std::move(argv), Answering(step, std::move(cb)));
}

RedisStore::ReplyCallback RedisStore::Answering(const char* step, ReplyCallback cb) {
  return [this, step, cb = std::move(cb)](Result<RedisReply> r) {
    if (r.ok() && r->IsErrorCode("READONLY")) OnReadOnly();
    Status s = ReplyError(r, step);
    if (!s.ok()) {
      cb(s);
      return;
    }
    cb(std::move(r));
  };
}

void RedisStore::SendEval(const RedisScript& script, const char* step,
                          std::vector<std::string> args, ReplyCallback cb) {
  FlushBatch();
  if (!available_) return AnswerUnavailable(std::move(cb));
  RawEval(script, step, std::move(args), std::move(cb));
}

void RedisStore::RawEval(const RedisScript& script, const char* step, std::vector<std::string> args,
                         ReplyCallback cb) {
  FlushBatch();
  if (!conn_) return AnswerUnavailable(std::move(cb));
  args.insert(args.begin(), prefix_);
  script.Run(*conn_, {jobs_key_}, std::move(args), Answering(step, std::move(cb)));
}

void RedisStore::EvalReplicated(const RedisScript& script, const char* step,
                                std::vector<std::string> args, ReplyCallback cb) {
  if (!options_.replicated) {
    Eval(script, step, std::move(args), std::move(cb));
    return;
  }
  auto reply = std::make_shared<std::optional<Result<RedisReply>>>();
  Eval(script, step, std::move(args), [reply](Result<RedisReply> r) { *reply = std::move(r); });
  int64_t timeout_ms = options_.wait_timeout.count();
  Command("wait", {"WAIT", "1", std::to_string(timeout_ms)},
          [reply, timeout_ms, cb = std::move(cb)](Result<RedisReply> w) {
            // Replies come in order: the script's has arrived.
            Result<RedisReply> r = std::move(**reply);
            if (!r.ok() || !w.ok()) {
              cb(!r.ok() ? r : w);
              return;
            }
            if (w->integer() < 1) {
              cb(Status::Unavailable("no replica acknowledged the write within " +
                                     std::to_string(timeout_ms) + " ms"));
              return;
            }
            cb(std::move(r));
          });
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
