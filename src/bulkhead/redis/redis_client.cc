#include "bulkhead/redis/redis_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

namespace bulkhead {

std::chrono::milliseconds RedisBackoff::After(std::chrono::milliseconds previous) const {
  if (previous.count() <= 0) return std::min(first, cap);
  return std::min(previous * 2, cap);
}

RedisClient::RedisClient(boost::asio::io_context& io, RedisClientOptions options)
    : io_(io),
      options_(std::move(options)),
      where_(options_.url.Redacted()),
      retry_timer_(std::make_unique<Timer>(
          io_, options_.clock != nullptr ? *options_.clock : SystemClock::Instance())),
      reason_(where_ + ": not connected") {}

RedisClient::~RedisClient() {
  *alive_ = false;
  Stop();
}

void RedisClient::Start(DoneCallback first) {
  if (state_ != RedisClientState::kStopped) return;
  first_ = std::move(first);
  ever_available_ = false;
  backoff_ = std::chrono::milliseconds(0);
  state_ = RedisClientState::kConnecting;
  SetReason(where_ + ": connecting");
  Attempt();
}

void RedisClient::Stop() {
  if (state_ == RedisClientState::kStopped) return;
  ++attempt_;
  attempting_ = in_hook_ = false;
  retry_pending_ = false;
  retry_timer_->Cancel();
  // Safe from inside its own callback (SentinelResolver::Finish touches nothing after it).
  resolver_.reset();
  if (conn_) conn_->Close();
  first_ = nullptr;
  state_ = RedisClientState::kStopped;
  SetReason(where_ + ": not connected");
}

void RedisClient::Fail(const Status& error) {
  if (state_ == RedisClientState::kStopped) return;
  SetReason(error.message());
  if (state_ == RedisClientState::kFailed) return;
  ++attempt_;
  attempting_ = in_hook_ = false;
  retry_pending_ = false;
  retry_timer_->Cancel();
  if (conn_) conn_->Close();
  Enter(RedisClientState::kFailed, error, error.message(), spdlog::level::err);
}

void RedisClient::Attempt() {
  attempting_ = true;
  in_hook_ = false;
  const uint64_t attempt = ++attempt_;
  if (options_.url.scheme != RedisUrl::Scheme::kSentinel) {
    ConnectTo(options_.url.endpoints.front());
    return;
  }
  if (!resolver_) {
    resolver_ =
        std::make_unique<SentinelResolver>(io_, options_.url, options_.sentinel_step_timeout);
  }
  // The resolver is ours: its callback never runs once it (or the client) is gone.
  resolver_->Resolve([this, attempt](Result<RedisEndpoint> primary) {
    if (attempt != attempt_) return;
    if (!primary.ok()) return AttemptFailed(attempt, primary.status());
    ConnectTo(*primary);
  });
}

void RedisClient::ConnectTo(const RedisEndpoint& endpoint) {
  const uint64_t attempt = attempt_;
  std::weak_ptr<bool> alive = alive_;
  if (!conn_ || !(conn_->options().endpoint == endpoint) || !conn_->idle()) {
    if (conn_) {
      // Answers it already posted (Unavailable) still run: the object goes after them.
      conn_->SetLostHandler(nullptr);
      conn_->Close();
      std::shared_ptr<RedisConnection> old(conn_.release());
      boost::asio::post(io_, [old] {});
    }
    RedisConnectOptions o = RedisConnectOptions::ForUrl(options_.url, endpoint);
    o.tls_ca_file = options_.ca_file;
    o.connect_timeout = options_.connect_timeout;
    o.reply_timeout = options_.reply_timeout;
    o.keepalive_every = options_.keepalive_every;
    conn_ = std::make_unique<RedisConnection>(io_, std::move(o));
    const RedisConnection* c = conn_.get();
    conn_->SetLostHandler([this, c](const Status& cause) { OnLost(c, cause); });
  }
  conn_->Connect([this, alive, attempt](Status s) {
    if (alive.expired() || attempt != attempt_) return;
    if (!s.ok()) return AttemptFailed(attempt, s);
    OnReady(attempt);
  });
}

void RedisClient::OnReady(uint64_t attempt) {
  if (options_.channels.empty()) return RunHook(attempt);
  std::weak_ptr<bool> alive = alive_;
  conn_->Subscribe(
      options_.channels,
      [this, alive](const std::string& channel, const std::string& message) {
        if (!alive.expired() && message_handler_) message_handler_(channel, message);
      },
      [this, alive, attempt](Status s) {
        if (alive.expired() || attempt != attempt_) return;
        if (!s.ok()) return AttemptFailed(attempt, s);
        RunHook(attempt);
      });
}

void RedisClient::RunHook(uint64_t attempt) {
  if (!hook_) return OnAvailable();
  in_hook_ = true;
  hook_([this, alive = std::weak_ptr<bool>(alive_), attempt](Status s) {
    if (alive.expired() || attempt != attempt_ || !in_hook_) return;
    in_hook_ = false;
    if (!s.ok()) return AttemptFailed(attempt, s);
    OnAvailable();
  });
}

void RedisClient::OnAvailable() {
  attempting_ = in_hook_ = false;
  backoff_ = std::chrono::milliseconds(0);
  const bool first = state_ == RedisClientState::kConnecting;
  std::string line = first || !ever_available_ ? "connected to " + where_
                                               : "the connection to " + where_ + " is back";
  ever_available_ = true;
  Enter(RedisClientState::kAvailable, Status::Ok(), line,
        first ? spdlog::level::debug : spdlog::level::info);
}

void RedisClient::AttemptFailed(uint64_t attempt, const Status& cause) {
  if (attempt != attempt_ || !attempting_) return;
  ++attempt_;  // whatever else of this attempt answers later is ignored
  attempting_ = in_hook_ = false;
  if (conn_ && !conn_->idle()) conn_->Close();
  if (!ever_available_ && (cause.code() == StatusCode::kPermissionDenied ||
                           cause.code() == StatusCode::kInvalidArgument)) {
    Fail(cause);
    return;
  }
  // Still down: the reason names the latest cause; nothing is logged per attempt.
  SetReason(cause.message() + ", retrying");
  ScheduleAttempt();
  if (state_ == RedisClientState::kConnecting) {
    Enter(RedisClientState::kDown, cause,
          where_ + " is unreachable (" + cause.message() + "); retrying", spdlog::level::warn);
  }
}

void RedisClient::OnLost(const RedisConnection* conn, const Status& cause) {
  if (conn != conn_.get()) return;
  if (state_ != RedisClientState::kAvailable) {
    // Lost while the hook ran: that attempt failed (unless its hook said so already).
    if (attempting_) AttemptFailed(attempt_, cause);
    return;
  }
  SetReason(cause.message() + ", retrying");
  ScheduleAttempt();
  Enter(RedisClientState::kDown, cause,
        "the connection to " + where_ + " was lost (" + cause.message() + "); reconnecting",
        spdlog::level::warn);
}

void RedisClient::OnReadOnly(const RedisConnection* conn) {
  // The server was demoted (a fail-over): find the primary. Close answers what is pending
  // (Unavailable) and does not run the lost handler, so the reconnect starts here.
  if (conn != conn_.get() || conn_->idle()) return;
  const std::string server = conn_->options().endpoint.ToString();
  Status cause = Status::Unavailable(server + " answered READONLY (a replica now)");
  if (state_ != RedisClientState::kAvailable) {
    if (attempting_) AttemptFailed(attempt_, cause);
    return;
  }
  conn_->Close();
  SetReason(cause.message() + ", retrying");
  ScheduleAttempt();
  Enter(RedisClientState::kDown, cause,
        server + " answered READONLY (a replica now); looking for the primary",
        spdlog::level::warn);
}

void RedisClient::ScheduleAttempt() {
  if (retry_pending_) return;
  retry_pending_ = true;
  backoff_ = options_.backoff.After(backoff_);
  retry_timer_->ExpiresAfter(backoff_);
  // A wait already due runs even when cancelled after: `attempt` tells a stale one.
  retry_timer_->AsyncWait([this, alive = std::weak_ptr<bool>(alive_),
                           attempt = attempt_](boost::system::error_code ec) {
    if (ec || alive.expired() || attempt != attempt_ || !retry_pending_) return;
    retry_pending_ = false;
    Attempt();
  });
}

void RedisClient::Enter(RedisClientState state, const Status& cause, const std::string& line,
                        int level) {
  state_ = state;
  if (state == RedisClientState::kAvailable) SetReason("");
  if (!line.empty()) {
    spdlog::log(static_cast<spdlog::level::level_enum>(level), "{}: {}", options_.name, line);
  }
  std::weak_ptr<bool> alive = alive_;
  if (first_) {
    DoneCallback first = std::move(first_);
    first_ = nullptr;
    first(cause);
    if (alive.expired() || state_ != state) return;
  }
  if (state_handler_) state_handler_(state, cause);
}

void RedisClient::SetReason(std::string reason) {
  std::lock_guard lock(reason_mu_);
  reason_ = std::move(reason);
}

std::string RedisClient::unavailable_reason() const {
  std::lock_guard lock(reason_mu_);
  return reason_;
}

std::optional<RedisEndpoint> RedisClient::endpoint() const {
  if (!conn_) return std::nullopt;
  return conn_->options().endpoint;
}

RedisClient::ReplyCallback RedisClient::Watching(ReplyCallback cb) {
  return [this, alive = std::weak_ptr<bool>(alive_), c = conn_.get(),
          cb = std::move(cb)](Result<RedisReply> r) {
    if (r.ok() && r->IsErrorCode("READONLY") && !alive.expired()) OnReadOnly(c);
    cb(std::move(r));
  };
}

void RedisClient::AnswerUnavailable(ReplyCallback cb) {
  std::string reason = unavailable_reason();
  if (reason.empty()) reason = where_ + ": not connected";
  boost::asio::post(
      io_, [cb = std::move(cb), reason = std::move(reason)] { cb(Status::Unavailable(reason)); });
}

void RedisClient::Send(const std::vector<std::string>& argv, ReplyCallback cb) {
  if (!available()) return AnswerUnavailable(std::move(cb));
  conn_->Send(argv, Watching(std::move(cb)));
}

void RedisClient::Eval(const RedisScript& script, std::vector<std::string> keys,
                       std::vector<std::string> args, ReplyCallback cb) {
  if (!available()) return AnswerUnavailable(std::move(cb));
  script.Run(*conn_, std::move(keys), std::move(args), Watching(std::move(cb)));
}

void RedisClient::SendRaw(const std::vector<std::string>& argv, ReplyCallback cb) {
  if (!conn_ || conn_->idle()) return AnswerUnavailable(std::move(cb));
  conn_->Send(argv, Watching(std::move(cb)));
}

void RedisClient::EvalRaw(const RedisScript& script, std::vector<std::string> keys,
                          std::vector<std::string> args, ReplyCallback cb) {
  if (!conn_ || conn_->idle()) return AnswerUnavailable(std::move(cb));
  script.Run(*conn_, std::move(keys), std::move(args), Watching(std::move(cb)));
}

}  // namespace bulkhead
