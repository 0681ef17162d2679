// RedisConnection: one connection to one Redis server on a boost::asio::io_context, over plain
// TCP or TLS (certificate and host name verified). Commands are pipelined: every Send appends to
// one output buffer, whatever one loop turn sends goes out in one write, and replies answer the
// callbacks in the order the commands were sent. hiredis encodes the commands and parses the
// replies; the I/O is Asio's.
//
// Threading: not thread-safe. Every method is called on the io_context's thread, and every
// callback runs there. The io_context must outlive the RedisConnection.
// Callbacks: always run later (never before the call that takes them returns), each exactly once
// while the connection lives. Once the RedisConnection is destroyed no callback of it runs any
// more (pending ones are dropped, not called). A callback may destroy the connection, or call any
// method of it.
//
// States and the reconnect contract:
//   idle --Connect--> connecting --(TCP, TLS, AUTH, SELECT done)--> ready
//   connecting --failure/timeout--> idle (Connect's callback gets the error)
//   ready --transport failure, reply timeout or Close--> idle: every pending callback gets
//         Unavailable once, then (for a loss, not for Close) the lost handler runs with the cause
//         (not when one of those callbacks already called Connect again).
// From idle, Connect may be called again on the same object (from the lost handler too): that is
// how the owner reconnects. Send while connecting queues behind the handshake; Send while idle
// answers Unavailable. Subscriber mode ends with the transport: re-Subscribe after reconnecting.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_reply.h"
#include "bulkhead/redis/redis_url.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct RedisConnectOptions {
  RedisEndpoint endpoint;
  bool tls = false;
  // PEM file of the CA(s) the server's certificate must chain to; empty: the system's CA paths.
  std::string tls_ca_file;
  // The name the certificate must carry (DNS name, or IP address in a SAN); empty: endpoint.host.
  std::string tls_server_name;
  std::string username;  // empty: AUTH password (the default user)
  std::string password;  // empty: no AUTH
  int db = 0;            // 0: no SELECT
  // Bounds the whole handshake: resolve, TCP connect, TLS handshake, AUTH and SELECT.
  std::chrono::milliseconds connect_timeout{5000};
  // 0: none. Otherwise a command unanswered for this long ends the connection as lost
  // (Unavailable "no reply within N ms", the lost handler runs): it catches a peer that went
  // silent (half-open TCP, a frozen server). Not for blocking commands (BLPOP) longer than it.
  std::chrono::milliseconds reply_timeout{0};
  // 0: none. Otherwise a ready connection sends PING every keepalive_every while no command is
  // unanswered (allowed in subscriber mode too, where nothing else is ever sent), so that
  // reply_timeout (which must then be set) catches a half-open socket on a connection that would
  // otherwise only wait: it is taken for lost within keepalive_every + reply_timeout.
  std::chrono::milliseconds keepalive_every{0};

  // The options for `url` at `endpoint` (the URL's own server, or the primary that Sentinel
  // named): TLS for rediss://, the URL's user, password and db.
  static RedisConnectOptions ForUrl(const RedisUrl& url, const RedisEndpoint& endpoint);
};

class RedisConnection {
 public:
  // A reply, or a non-OK Status when the transport failed ("redis HOST:PORT: ...": Unavailable
  // for connection loss or not connected; FailedPrecondition for a misuse such as Send in
  // subscriber mode). An error reply from Redis is an OK Result holding a reply of type kError:
  // callers decide what it means.
  using ReplyCallback = std::function<void(Result<RedisReply>)>;
  using DoneCallback = std::function<void(Status)>;
  using LostHandler = std::function<void(const Status& cause)>;
  using MessageHandler =
      std::function<void(const std::string& channel, const std::string& message)>;

  RedisConnection(boost::asio::io_context& io, RedisConnectOptions options);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // From idle: opens the transport and authenticates; `done` gets OK when ready, else
  // Unavailable (unreachable, refused, timed out, TLS handshake or verification failed: the
  // message names host:port and the cause), PermissionDenied (AUTH refused: Redis's reason) or
  // InvalidArgument (SELECT refused, unreadable CA file). Called while not idle: `done` gets
  // FailedPrecondition.
  void Connect(DoneCallback done);

  // Sends one command (argv[0] is the command name), encoded at once: argv is not kept. Replies
  // arrive in Send order. In subscriber mode only PING is sent (its reply is ["pong", ""]).
  void Send(const std::vector<std::string>& argv, ReplyCallback callback);

  // Turns the connection into a subscriber: SUBSCRIBE `channels`; `done` gets OK once Redis
  // confirmed every channel. From then on each published message calls `on_message` (the last
  // handler given wins), and Send answers FailedPrecondition; Subscribe may be called again to
  // add channels. Needs a connection that is connecting or ready.
  void Subscribe(std::vector<std::string> channels, MessageHandler on_message, DoneCallback done);

  // Closes the transport: pending callbacks get Unavailable("... closed"); the lost handler does
  // not run. The connection is idle afterwards (Connect may be called again).
  void Close();

  // Called (later, on the loop) when a ready connection is lost; not for Close or for a failed
  // Connect (whose callback reports that).
  void SetLostHandler(LostHandler handler);

  bool ready() const;
  bool idle() const;
  // Commands sent and not answered yet.
  size_t pending() const;
  const RedisConnectOptions& options() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace bulkhead
