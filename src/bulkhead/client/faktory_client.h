// FaktoryClient: a small blocking client for the Faktory work protocol (FWP v2), used by the
// benchmarks, tools and tests. It speaks to bulkhead or to any Faktory server.
//
// One client owns one TCP connection. Connect() reads the `+HI` greeting, answers `HELLO` (with
// the pwdhash when the greeting asks for a password, and the wid when one is given) and returns a
// connected client. Every command method writes one line and reads one RESP2 reply. A server
// `-ERR text` reply becomes a non-OK Status whose message contains the command verb and the
// server's text verbatim, e.g. "PUSH: server replied -ERR jobs must have a jobtype parameter".
//
// Pipelining: SendRaw() writes any number of complete command lines in one write, ReadReply()
// reads the replies one by one in order (the server answers in order), and Pipeline() does both.
//
// Example:
//   Result<std::unique_ptr<FaktoryClient>> c = FaktoryClient::Connect({.port = 7419});
//   if (!c.ok()) return c.status();
//   Status s = (*c)->Push(R"({"jid":"123456789","jobtype":"noop","args":[]})");
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/client/tls_client.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Where a Faktory server is and the password to use. Value type.
struct FaktoryUrl {
  std::string host = "127.0.0.1";
  int port = 7419;
  std::string password;  // empty: none
  bool tls = false;      // tcp+tls://
};

// Parses "tcp://[:password@]host[:port]" or "tcp+tls://..." (TLS). The password is
// percent-decoded; the port defaults to 7419. InvalidArgument names what is wrong.
Result<FaktoryUrl> ParseFaktoryUrl(std::string_view url);

// The Faktory client convention: the env var named by FAKTORY_PROVIDER (default "FAKTORY_URL")
// holds the URL; when it is unset, "tcp://127.0.0.1:7419".
Result<FaktoryUrl> FaktoryUrlFromEnvironment();

// One RESP2 reply. Value type.
struct FaktoryReply {
  enum class Kind { kSimple, kError, kBulk, kNull };
  Kind kind = Kind::kNull;
  // kSimple: the text after '+'; kError: the text after '-' (e.g. "ERR unknown command X");
  // kBulk: the payload bytes; kNull: empty.
  std::string text;

  bool is_error() const { return kind == Kind::kError; }
  bool is_ok() const { return kind == Kind::kSimple && text == "OK"; }
};

struct FaktoryConnectOptions {
  std::string host = "127.0.0.1";
  int port = 7419;
  std::string password;  // used only when the greeting asks for one
  std::string wid;       // empty: a producer (no BEAT)
  std::string hostname;  // empty: gethostname()
  std::vector<std::string> labels;
  // TLS (tcp+tls://): the server's certificate is checked against ca_file (empty: the system's
  // trust store) and must name `host`.
  bool tls = false;
  std::string ca_file;
  // Bound on connect and on each socket write and read (SO_SNDTIMEO / SO_RCVTIMEO). FETCH blocks
  // up to 2 s on the server, so keep this well above 2 s.
  std::chrono::milliseconds timeout{10'000};
};

// Thread-compatible: one thread at a time may use a client (it is a single socket with one read
// buffer); distinct clients are independent. Not copyable; movable only through unique_ptr.
class FaktoryClient {
 public:
  // Connects, reads the greeting and completes the HELLO handshake.
  // Unavailable: cannot connect / the connection broke; PermissionDenied: wrong password (the
  // message holds the server's "Invalid password"); others: the server's -ERR reply to HELLO.
  static Result<std::unique_ptr<FaktoryClient>> Connect(const FaktoryConnectOptions& options);
  static Result<std::unique_ptr<FaktoryClient>> Connect(const std::string& host, int port,
                                                        const std::string& password = "",
                                                        const std::string& wid = "");
  // Connect() with host, port, password and TLS from a FaktoryUrl; `ca_file` as in
  // FaktoryConnectOptions.
  static Result<std::unique_ptr<FaktoryClient>> Connect(const FaktoryUrl& url,
                                                        const std::string& wid = "",
                                                        const std::string& ca_file = "");

  // Closes the socket without sending END.
  ~FaktoryClient();
  FaktoryClient(const FaktoryClient&) = delete;
  FaktoryClient& operator=(const FaktoryClient&) = delete;

  // The greeting's JSON, e.g. {"v":2}.
  const std::string& greeting() const { return greeting_; }

  // PUSH one job (a JSON object). OK on "+OK".
  Status Push(std::string_view job_json);
  // PUSHB a JSON array of jobs. Returns the server's map {jid: error} as JSON text ("{}" when
  // every job was taken).
  Result<std::string> PushBulk(std::string_view jobs_array_json);
  // FETCH from the queues in order; nullopt when the server answered null (no job in ~2 s).
  Result<std::optional<std::string>> Fetch(const std::vector<std::string>& queues);
  Status Ack(std::string_view jid);
  Status Fail(std::string_view jid, std::string_view errtype, std::string_view message,
              const std::vector<std::string>& backtrace = {});
  // BEAT for this client's wid. Returns "OK", or the state the server asks for ("quiet",
  // "terminate"). FailedPrecondition when the client has no wid.
  Result<std::string> Beat();
  // INFO: the JSON text.
  Result<std::string> Info();
  Status Flush();
  // MUTATE with a JSON object {"cmd","target","filter"} (sent compact, without spaces).
  Status Mutate(std::string_view mutation_json);
  // QUEUE PAUSE|RESUME|REMOVE q... ("*" = all).
  Status QueueCommand(std::string_view subcommand, const std::vector<std::string>& queues);
  // QUEUE LATENCY q...: the JSON text {"q":seconds}.
  Result<std::string> QueueLatency(const std::vector<std::string>& queues);
  // Sends END (no reply expected) and closes the connection. Further calls fail Unavailable.
  Status End();

  // Sends one line (CRLF added) and reads one reply. A -ERR reply is returned as a reply of
  // kind kError (not as a failed Status); Status failures are transport/protocol failures only.
  Result<FaktoryReply> Call(std::string_view line);
  // Writes `bytes` as they are (the caller supplies complete lines ending in "\r\n").
  Status SendRaw(std::string_view bytes);
  // Reads the next reply.
  Result<FaktoryReply> ReadReply();
  // Writes all lines (CRLF added to each) in one write, then reads lines.size() replies.
  Result<std::vector<FaktoryReply>> Pipeline(const std::vector<std::string>& lines);

 private:
  FaktoryClient(int fd, std::string wid);

  // Call() that turns a kError reply into a Status naming `verb` and the server's text.
  Result<FaktoryReply> Command(std::string_view verb, std::string_view line);
  Status ExpectOk(std::string_view verb, std::string_view line);
  // Reads one CRLF-terminated line (without the CRLF) from the buffer/socket.
  Result<std::string> ReadLine();
  Status ReadExact(size_t n, std::string* out);
  Status FillBuffer();
  Status WriteAll(std::string_view bytes);
  void CloseSocket();

  int fd_;
  std::unique_ptr<TlsClient> tls_;  // null: plain TCP
  const std::string wid_;
  std::string greeting_;
  std::string buf_;     // read buffer; buf_.size() is its capacity
  size_t buf_pos_ = 0;  // first unconsumed byte
  size_t buf_end_ = 0;  // end of the received bytes
};

// Turns a -ERR reply into a Status (PermissionDenied for "Invalid password", NotFound for
// "Job not found"/"unknown worker", AlreadyExists for "already known", ResourceExhausted for
// "too many connections"/"line too long", InvalidArgument otherwise). The message is
// "<verb>: server replied -<text>".
Status StatusFromErrorReply(std::string_view verb, const FaktoryReply& reply);

}  // namespace bulkhead
