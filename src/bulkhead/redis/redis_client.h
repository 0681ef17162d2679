// RedisClient: one logical connection to "the primary of this RedisUrl" (redis://, rediss://,
// redis-sentinel://) that stays up by itself. It owns one RedisConnection at a time (the
// handshake, pipelining, reply timeout, keepalive and TLS are that class's) and, for a Sentinel
// URL, a SentinelResolver that names the primary before each connection.
//
// Lifecycle (state() and the log line each change writes, at most one per change, never one per
// retry; NAME is options.name, URL the URL without its password):
//   kStopped   --Start-->  kConnecting: the first attempt runs.
//   kConnecting --attempt done--> kAvailable   (debug "NAME: connected to URL")
//   kConnecting --attempt failed--> kDown      (warn "NAME: URL is unreachable (CAUSE); retrying")
//   kAvailable --connection lost--> kDown      (warn "NAME: the connection to URL was lost
//                                                (CAUSE); reconnecting")
//   kAvailable --a reply READONLY--> kDown     (warn "NAME: HOST:PORT answered READONLY (a replica
//                                                now); looking for the primary")
//   kDown --attempt done--> kAvailable         (info "NAME: the connection to URL is back", or
//                                                "NAME: connected to URL" when it never was)
//   any but kStopped --Fail, or refused AUTH/SELECT before the first success--> kFailed
//                                              (error "NAME: CAUSE"): no more attempts
//   any --Stop--> kStopped (no log line, no state callback)
// An attempt: resolve the primary (Sentinel URLs: the Sentinels are asked again at every attempt,
// so a fail-over is followed), connect (AUTH, SELECT), subscribe to options.channels (subscriber
// mode), then run the on-connected hook; the client is kAvailable once the hook reports OK. A
// failed attempt, a hook reporting an error (the connection is closed) or a lost connection
// schedules the next attempt after the backoff: options.backoff.first (100 ms), doubling up to
// options.backoff.cap (5 s), back to the first once connected. A reply whose error code is
// READONLY (the server was demoted to a replica by a fail-over) closes the connection and
// reconnects at once (first backoff delay), asking the Sentinels again.
// Refused AUTH (PermissionDenied) or SELECT (InvalidArgument) before the client was ever
// available is a configuration error: kFailed with that error, no retry. After one success they
// are retried like any other failure (a password being rotated on the server).
//
// Availability: unavailable_reason() is empty while kAvailable; otherwise why, without the
// password: the latest cause + ", retrying" while kDown ("redis 127.0.0.1:6379: cannot connect:
// Connection refused, retrying"; "127.0.0.1:6379 answered READONLY (a replica now), retrying"),
// the error itself once kFailed, "URL: not connected" while kStopped or "URL: connecting" during
// the first attempt. Each retry updates the reason without a log line or a state callback.
//
// Calls: Send and Eval go to the server only while kAvailable; otherwise they answer
// Unavailable(unavailable_reason()) at once (posted, without waiting for any server). SendRaw
// and EvalRaw also go while the on-connected hook runs (its setup commands: SCRIPT LOAD, a layout
// check) and queue behind a handshake in progress; with no connection at all they answer
// Unavailable too. Replies come in call order; an error reply from Redis is an OK Result holding
// a reply of type kError (RedisConnection's contract): the owner decides what it means. A
// connection lost or closed answers its pending calls Unavailable ("redis HOST:PORT: connection
// lost: ..."). In subscriber mode (options.channels not empty) only PING may be sent; messages
// reach the message handler, and the channels are subscribed again after every reconnect.
//
// Callbacks (the first-attempt callback, the hook, the state and message handlers, replies)
// always run later, on the loop, never inside the call that takes them, and none runs once the
// client is destroyed; the exception is Fail, which runs the state handler (and an unanswered
// first-attempt callback) before it returns. The first-attempt callback runs before the state
// handler of that attempt, and never after Stop.
// Threading: not thread-safe; every method on the io_context's thread, except
// unavailable_reason(), which any thread may call. The io_context (and options.clock) must
// outlive the client.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_connection.h"
#include "bulkhead/redis/redis_script.h"
#include "bulkhead/redis/redis_url.h"
#include "bulkhead/redis/sentinel_resolver.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

// The waits between reconnect attempts: `first`, doubling after each failed attempt, at most `cap`.
struct RedisBackoff {
  std::chrono::milliseconds first{100};
  std::chrono::milliseconds cap{5000};

  // The wait after one of `previous` (zero: the first wait).
  std::chrono::milliseconds After(std::chrono::milliseconds previous) const;
};

struct RedisClientOptions {
  RedisUrl url;
  std::string ca_file;         // rediss:// only; empty: the system's CA paths
  std::string name = "redis";  // starts every log line of this client
  // Per connection (RedisConnectOptions): the handshake's bound, the reply timeout (0: none) and
  // the keepalive PING interval (0: none; needs reply_timeout).
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds reply_timeout{0};
  std::chrono::milliseconds keepalive_every{0};
  // Each Sentinel step's bound (SentinelResolver).
  std::chrono::milliseconds sentinel_step_timeout{2000};
  // Not empty: subscriber mode, these channels subscribed on every connection.
  std::vector<std::string> channels;
  RedisBackoff backoff;
  // Measures the backoff waits (util/timer.h); null: SystemClock. A SimulatedClock lets a test
  // move through the waits without waiting.
  const Clock* clock = nullptr;
};

enum class RedisClientState { kStopped, kConnecting, kAvailable, kDown, kFailed };

class RedisClient {
 public:
  using ReplyCallback = RedisConnection::ReplyCallback;
  using DoneCallback = std::function<void(Status)>;
  // Runs once a connection is ready (and subscribed), before the client is available. It sends
  // its setup commands with SendRaw/EvalRaw and calls `done` once, with OK (the client becomes
  // available) or an error (the attempt failed: the connection is closed and retried, the reason
  // being the error's message). It may call Fail instead. A `done` for an attempt that ended
  // meanwhile (the connection lost, Stop) is ignored.
  using ConnectedHook = std::function<void(DoneCallback done)>;
  // The new state and its cause (OK for kAvailable; the failure for kDown and kFailed).
  using StateHandler = std::function<void(RedisClientState state, const Status& cause)>;
  using MessageHandler = RedisConnection::MessageHandler;

  RedisClient(boost::asio::io_context& io, RedisClientOptions options);
  ~RedisClient();  // as Stop
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Set before Start (each may be replaced later; null clears).
  void SetConnectedHook(ConnectedHook hook) { hook_ = std::move(hook); }
  void SetStateHandler(StateHandler handler) { state_handler_ = std::move(handler); }
  void SetMessageHandler(MessageHandler handler) { message_handler_ = std::move(handler); }

  // From kStopped: starts the first attempt. `first` (may be null) gets that attempt's outcome
  // once: OK (available), or why it failed, after which the client keeps retrying in the
  // background (kDown) unless the failure was fatal (kFailed). Ignored unless kStopped.
  void Start(DoneCallback first = nullptr);
  // Ends the connection and any pending attempt or wait: pending calls answer Unavailable
  // ("... connection closed"); kStopped. Start may be called again.
  void Stop();
  // Gives up for good: kFailed with `error` as the reason (its message), the connection closed,
  // no more attempts. Also replaces the reason of a client that failed already (no log line or
  // state callback then).
  void Fail(const Status& error);

  // See "Calls" above. `argv[0]` is the command; Eval sends EVALSHA (EVAL on NOSCRIPT).
  void Send(const std::vector<std::string>& argv, ReplyCallback cb);
  void Eval(const RedisScript& script, std::vector<std::string> keys, std::vector<std::string> args,
            ReplyCallback cb);
  void SendRaw(const std::vector<std::string>& argv, ReplyCallback cb);
  void EvalRaw(const RedisScript& script, std::vector<std::string> keys,
               std::vector<std::string> args, ReplyCallback cb);

  RedisClientState state() const { return state_; }
  bool available() const { return state_ == RedisClientState::kAvailable; }
  // Any thread. Empty while available.
  std::string unavailable_reason() const;
  // Calls sent on the current connection and not answered yet.
  size_t pending() const { return conn_ ? conn_->pending() : 0; }
  // The server of the current (or last) connection; empty before the first.
  std::optional<RedisEndpoint> endpoint() const;
  const RedisClientOptions& options() const { return options_; }

 private:
  void Attempt();
  void ConnectTo(const RedisEndpoint& endpoint);
  void OnReady(uint64_t attempt);
  void RunHook(uint64_t attempt);
  void OnAvailable();
  void AttemptFailed(uint64_t attempt, const Status& cause);
  void OnLost(const RedisConnection* conn, const Status& cause);
  void OnReadOnly(const RedisConnection* conn);
  void ScheduleAttempt();
  // Enters `state` with `cause` (its reason), logs `line` (unless empty) and calls the state
  // handler; the first-attempt callback first, when this ends the first attempt.
  void Enter(RedisClientState state, const Status& cause, const std::string& line, int level);
  void SetReason(std::string reason);
  // Wraps a reply callback: a READONLY reply from the current connection starts following the
  // primary before `cb` gets it.
  ReplyCallback Watching(ReplyCallback cb);
  void AnswerUnavailable(ReplyCallback cb);

  boost::asio::io_context& io_;
  const RedisClientOptions options_;
  const std::string where_;  // the URL without its password
  ConnectedHook hook_;
  StateHandler state_handler_;
  MessageHandler message_handler_;
  DoneCallback first_;
  RedisClientState state_ = RedisClientState::kStopped;
  bool ever_available_ = false;
  // The attempt under way (connect, subscribe, hook) and whether one is; bumped when an attempt
  // ends, so that late answers to an earlier one are ignored.
  uint64_t attempt_ = 0;
  bool attempting_ = false;
  bool in_hook_ = false;
  std::chrono::milliseconds backoff_{0};
  std::unique_ptr<RedisConnection> conn_;
  std::unique_ptr<SentinelResolver> resolver_;  // Sentinel URLs only
  std::unique_ptr<Timer> retry_timer_;
  bool retry_pending_ = false;
  mutable std::mutex reason_mu_;
  std::string reason_;
  // Cleared by the destructor: posted work and timer handlers check it.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
