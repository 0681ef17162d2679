#include "bulkhead/client/faktory_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "bulkhead/protocol/pwdhash.h"
#include "bulkhead/util/percent_encoding.h"

namespace bulkhead {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// Largest bulk reply accepted (a guard against a corrupt length, not a protocol limit).
constexpr int64_t kMaxBulkBytes = 512LL * 1024 * 1024;

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

Result<std::string> DecodePassword(std::string_view s) {
  auto out = PercentDecode(s);
  if (!out.ok()) return Status::InvalidArgument("bad percent escape in Faktory URL password");
  return out;
}

std::string JoinQueues(std::string_view verb, const std::vector<std::string>& queues) {
  std::string line(verb);
  for (const std::string& q : queues) {
    line.push_back(' ');
    line += q;
  }
  return line;
}

// Connects a socket to host:port within `timeout`. Returns the fd (blocking mode, TCP_NODELAY).
Result<int> ConnectSocket(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res);
  if (rc != 0) {
    return Status::Unavailable("cannot resolve " + host + ": " + gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = Errno("socket");
      continue;
    }
    int flags = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, static_cast<int>(timeout.count()));
      if (rc == 0) {
        last_error = "connect timed out";
        close(fd);
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        errno = err;
        last_error = Errno("connect");
        close(fd);
        continue;
      }
      rc = 0;
    }
    if (rc != 0) {
      last_error = Errno("connect");
      close(fd);
      continue;
    }
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    timeval tv{};
    tv.tv_sec = timeout.count() / 1000;
    tv.tv_usec = (timeout.count() % 1000) * 1000;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    freeaddrinfo(res);
    return fd;
  }
  freeaddrinfo(res);
  return Status::Unavailable("cannot connect to " + host + ":" + port_text + ": " + last_error);
}

std::string LocalHostname() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace

Result<FaktoryUrl> ParseFaktoryUrl(std::string_view url) {
  constexpr std::string_view kScheme = "tcp://";
  constexpr std::string_view kTlsScheme = "tcp+tls://";
  FaktoryUrl out;
  std::string_view rest;
  if (url.substr(0, kScheme.size()) == kScheme) {
    rest = url.substr(kScheme.size());
  } else if (url.substr(0, kTlsScheme.size()) == kTlsScheme) {
    rest = url.substr(kTlsScheme.size());
    out.tls = true;
  } else {
    return Status::InvalidArgument("Faktory URL must start with tcp:// or tcp+tls:// (got \"" +
                                   std::string(url) + "\")");
  }
  // Drop a trailing path such as "/".
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = userinfo.find(':');
    std::string_view password =
        colon == std::string_view::npos ? std::string_view() : userinfo.substr(colon + 1);
    Result<std::string> decoded = DecodePassword(password);
    if (!decoded.ok()) return decoded.status();
    out.password = *decoded;
  }
  std::string_view host = rest;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {  // [v6]:port
    size_t close = rest.find(']');
    if (close == std::string_view::npos)
      return Status::InvalidArgument("unterminated [ in Faktory URL");
    host = rest.substr(1, close - 1);
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Status::InvalidArgument("junk after ] in Faktory URL");
      port = after.substr(1);
    }
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (!host.empty()) out.host = std::string(host);
  if (!port.empty()) {
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9') {
        return Status::InvalidArgument("bad port \"" + std::string(port) + "\" in Faktory URL");
      }
      value = value * 10 + (c - '0');
      if (value > 65535) return Status::InvalidArgument("port out of range in Faktory URL");
    }
    if (value == 0) return Status::InvalidArgument("port 0 in Faktory URL");
    out.port = value;
  }
  return out;
}

Result<FaktoryUrl> FaktoryUrlFromEnvironment() {
  const char* provider = std::getenv("FAKTORY_PROVIDER");
  std::string var = provider != nullptr && *provider != '\0' ? provider : "FAKTORY_URL";
  const char* url = std::getenv(var.c_str());
  if (url == nullptr || *url == '\0') return ParseFaktoryUrl("tcp://127.0.0.1:7419");
  return ParseFaktoryUrl(url);
}

Status StatusFromErrorReply(std::string_view verb, const FaktoryReply& reply) {
  std::string message = std::string(verb) + ": server replied -" + reply.text;
  const std::string& t = reply.text;
  auto has = [&t](std::string_view s) { return t.find(s) != std::string::npos; };
  if (has("Invalid password")) return Status::PermissionDenied(std::move(message));
  if (has("Job not found") || has("unknown worker")) return Status::NotFound(std::move(message));
  if (has("already known")) return Status::AlreadyExists(std::move(message));
  if (has("too many connections") || has("line too long")) {
    return Status::ResourceExhausted(std::move(message));
  }
  return Status::InvalidArgument(std::move(message));
}

FaktoryClient::FaktoryClient(int fd, std::string wid) : fd_(fd), wid_(std::move(wid)) {}

FaktoryClient::~FaktoryClient() { CloseSocket(); }

void FaktoryClient::CloseSocket() {
  tls_.reset();
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
}

Result<std::unique_ptr<FaktoryClient>> FaktoryClient::Connect(const std::string& host, int port,
                                                              const std::string& password,
                                                              const std::string& wid) {
  FaktoryConnectOptions options;
  options.host = host;
  options.port = port;
  options.password = password;
  options.wid = wid;
  return Connect(options);
}

Result<std::unique_ptr<FaktoryClient>> FaktoryClient::Connect(const FaktoryUrl& url,
                                                              const std::string& wid,
                                                              const std::string& ca_file) {
  FaktoryConnectOptions options;
  options.host = url.host;
  options.port = url.port;
  options.password = url.password;
  options.wid = wid;
  options.tls = url.tls;
  options.ca_file = ca_file;
  return Connect(options);
}

Result<std::unique_ptr<FaktoryClient>> FaktoryClient::Connect(
    const FaktoryConnectOptions& options) {
  Result<int> fd = ConnectSocket(options.host, options.port, options.timeout);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<FaktoryClient> client(new FaktoryClient(*fd, options.wid));
  if (options.tls) {
    auto tls = TlsClient::Handshake(*fd, options.host, options.ca_file);
    if (!tls.ok()) return tls.status();
    client->tls_ = std::move(*tls);
  }

  Result<FaktoryReply> hi = client->ReadReply();
  if (!hi.ok()) return Status::Unavailable("reading the greeting: " + hi.status().message());
  if (hi->kind != FaktoryReply::Kind::kSimple || hi->text.rfind("HI ", 0) != 0) {
    if (hi->is_error()) return StatusFromErrorReply("greeting", *hi);
    return Status::Unavailable("unexpected greeting \"" + hi->text + "\"");
  }
  client->greeting_ = hi->text.substr(3);
  nlohmann::json greeting = nlohmann::json::parse(client->greeting_, nullptr, false);
  if (greeting.is_discarded() || !greeting.is_object()) {
    return Status::Unavailable("greeting is not a JSON object: " + client->greeting_);
  }
  if (greeting.value("v", 0) != 2) {
    return Status::FailedPrecondition("server speaks FWP version " +
                                      greeting.value("v", nlohmann::json(nullptr)).dump() +
                                      ", this client speaks 2");
  }

  nlohmann::json hello = {
      {"v", 2}, {"hostname", options.hostname.empty() ? LocalHostname() : options.hostname}};
  if (!options.wid.empty()) {
    hello["wid"] = options.wid;
    hello["pid"] = static_cast<int>(getpid());
    hello["labels"] = options.labels;
  }
  if (greeting.contains("s")) {
    if (options.password.empty()) {
      return Status::PermissionDenied("the server requires a password and none was given");
    }
    std::string salt = greeting["s"].is_string() ? greeting["s"].get<std::string>() : "";
    int iterations = greeting.value("i", 1);
    hello["pwdhash"] = PasswordHash(options.password, salt, iterations);
  }
  Result<FaktoryReply> reply = client->Call("HELLO " + hello.dump());
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return StatusFromErrorReply("HELLO", *reply);
  if (!reply->is_ok()) {
    return Status::Unavailable("HELLO: unexpected reply \"" + reply->text + "\"");
  }
  return client;
}

Status FaktoryClient::WriteAll(std::string_view bytes) {
  if (fd_ < 0) return Status::Unavailable("connection is closed");
  if (tls_) {
    Status s = tls_->WriteAll(bytes);
    if (!s.ok()) CloseSocket();
    return s;
  }
  while (!bytes.empty()) {
    // Blocking send bounded by SO_SNDTIMEO (set to options.timeout in Connect).
    ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    Status s = (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                   ? Status::Unavailable("write timed out")
                   : Status::Unavailable(Errno("write"));
    CloseSocket();
    return s;
  }
  return Status::Ok();
}

Status FaktoryClient::FillBuffer() {
  if (fd_ < 0) return Status::Unavailable("connection is closed");
  // Unconsumed bytes live in buf_[buf_pos_, buf_end_); buf_.size() is the capacity, so that a read
  // never zero-fills memory it is about to overwrite.
  if (buf_pos_ == buf_end_) {
    buf_pos_ = buf_end_ = 0;
  } else if (buf_pos_ > 0 && buf_.size() - buf_end_ < kReadChunk) {
    std::memmove(buf_.data(), buf_.data() + buf_pos_, buf_end_ - buf_pos_);
    buf_end_ -= buf_pos_;
    buf_pos_ = 0;
  }
  if (buf_.size() - buf_end_ < kReadChunk)
    buf_.resize(std::max(buf_.size() * 2, buf_end_ + kReadChunk));
  if (tls_) {
    Result<size_t> n = tls_->Read(buf_.data() + buf_end_, buf_.size() - buf_end_);
    if (n.ok() && *n > 0) {
      buf_end_ += *n;
      return Status::Ok();
    }
    // A TLS record may have been cut by the timeout: the connection is not reused after any
    // failure.
    Status s = n.ok() ? Status::Unavailable("connection closed by the server") : n.status();
    CloseSocket();
    return s;
  }
  while (true) {
    // Blocking recv bounded by SO_RCVTIMEO (set to options.timeout in Connect): one syscall per
    // read.
    ssize_t n = recv(fd_, buf_.data() + buf_end_, buf_.size() - buf_end_, 0);
    if (n > 0) {
      buf_end_ += static_cast<size_t>(n);
      return Status::Ok();
    }
    if (n == 0) {
      CloseSocket();
      return Status::Unavailable("connection closed by the server");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return Status::Unavailable("timed out waiting for a reply");
    }
    Status s = Status::Unavailable(Errno("read"));
    CloseSocket();
    return s;
  }
}

Result<std::string> FaktoryClient::ReadLine() {
  size_t scanned = 0;  // bytes after buf_pos_ already searched for '\n'
  while (true) {
    const char* begin = buf_.data() + buf_pos_;
    const void* nl = std::memchr(begin + scanned, '\n', buf_end_ - buf_pos_ - scanned);
    if (nl != nullptr) {
      size_t len = static_cast<const char*>(nl) - begin;
      size_t text_len = len > 0 && begin[len - 1] == '\r' ? len - 1 : len;
      std::string line(begin, text_len);
      buf_pos_ += len + 1;
      return line;
    }
    scanned = buf_end_ - buf_pos_;
    Status s = FillBuffer();
    if (!s.ok()) return s;
  }
}

Status FaktoryClient::ReadExact(size_t n, std::string* out) {
  while (buf_end_ - buf_pos_ < n) {
    Status s = FillBuffer();
    if (!s.ok()) return s;
  }
  out->assign(buf_.data() + buf_pos_, n);
  buf_pos_ += n;
  return Status::Ok();
}

Result<FaktoryReply> FaktoryClient::ReadReply() {
  Result<std::string> line = ReadLine();
  if (!line.ok()) return line.status();
  if (line->empty()) return Status::Unavailable("malformed reply: empty line");
  FaktoryReply reply;
  char type = (*line)[0];
  switch (type) {
    case '+':
      reply.kind = FaktoryReply::Kind::kSimple;
      reply.text = line->substr(1);
      return reply;
    case '-':
      reply.kind = FaktoryReply::Kind::kError;
      reply.text = line->substr(1);
      return reply;
    case '$': {
      char* end = nullptr;
      long long len = std::strtoll(line->c_str() + 1, &end, 10);
      if (end == line->c_str() + 1 || *end != '\0' || len < -1 || len > kMaxBulkBytes) {
        return Status::Unavailable("malformed bulk header \"" + *line + "\"");
      }
      if (len == -1) {
        reply.kind = FaktoryReply::Kind::kNull;
        return reply;
      }
      reply.kind = FaktoryReply::Kind::kBulk;
      std::string body;
      Status s = ReadExact(static_cast<size_t>(len) + 2, &body);
      if (!s.ok()) return s;
      if (body.compare(body.size() - 2, 2, "\r\n") != 0) {
        return Status::Unavailable("bulk reply not terminated by CRLF");
      }
      body.resize(body.size() - 2);
      reply.text = std::move(body);
      return reply;
    }
    default:
      return Status::Unavailable("malformed reply line \"" + *line + "\"");
  }
}

Status FaktoryClient::SendRaw(std::string_view bytes) { return WriteAll(bytes); }

Result<FaktoryReply> FaktoryClient::Call(std::string_view line) {
  std::string out;
  out.reserve(line.size() + 2);
  out.append(line);
  out.append("\r\n");
  Status s = WriteAll(out);
  if (!s.ok()) return s;
  return ReadReply();
}

Result<std::vector<FaktoryReply>> FaktoryClient::Pipeline(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) {
    out += l;
    out += "\r\n";
  }
  Status s = WriteAll(out);
  if (!s.ok()) return s;
  std::vector<FaktoryReply> replies;
  replies.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    Result<FaktoryReply> r = ReadReply();
    if (!r.ok()) return r.status();
    replies.push_back(std::move(*r));
  }
  return replies;
}

Result<FaktoryReply> FaktoryClient::Command(std::string_view verb, std::string_view line) {
  Result<FaktoryReply> r = Call(line);
  if (!r.ok()) {
    return Status(r.status().code(), std::string(verb) + ": " + r.status().message());
  }
  if (r->is_error()) return StatusFromErrorReply(verb, *r);
  return r;
}

Status FaktoryClient::ExpectOk(std::string_view verb, std::string_view line) {
  Result<FaktoryReply> r = Command(verb, line);
  if (!r.ok()) return r.status();
  if (!r->is_ok()) {
    return Status::Unavailable(std::string(verb) + ": expected +OK, got \"" + r->text + "\"");
  }
  return Status::Ok();
}

Status FaktoryClient::Push(std::string_view job_json) {
  std::string line = "PUSH ";
  line.append(job_json);
  return ExpectOk("PUSH", line);
}

Result<std::string> FaktoryClient::PushBulk(std::string_view jobs_array_json) {
  std::string line = "PUSHB ";
  line.append(jobs_array_json);
  Result<FaktoryReply> r = Command("PUSHB", line);
  if (!r.ok()) return r.status();
  if (r->kind != FaktoryReply::Kind::kBulk) {
    return Status::Unavailable("PUSHB: expected a bulk JSON map, got \"" + r->text + "\"");
  }
  return std::move(r->text);
}

Result<std::optional<std::string>> FaktoryClient::Fetch(const std::vector<std::string>& queues) {
  Result<FaktoryReply> r = Command("FETCH", JoinQueues("FETCH", queues));
  if (!r.ok()) return r.status();
  if (r->kind == FaktoryReply::Kind::kNull) return std::optional<std::string>();
  if (r->kind != FaktoryReply::Kind::kBulk) {
    return Status::Unavailable("FETCH: expected a job or null, got \"" + r->text + "\"");
  }
  return std::optional<std::string>(std::move(r->text));
}

Status FaktoryClient::Ack(std::string_view jid) {
  return ExpectOk("ACK", "ACK " + nlohmann::json({{"jid", jid}}).dump());
}

Status FaktoryClient::Fail(std::string_view jid, std::string_view errtype, std::string_view message,
                           const std::vector<std::string>& backtrace) {
  nlohmann::json body = {
      {"jid", jid}, {"errtype", errtype}, {"message", message}, {"backtrace", backtrace}};
  return ExpectOk("FAIL", "FAIL " + body.dump());
}

Result<std::string> FaktoryClient::Beat() {
  if (wid_.empty()) return Status::FailedPrecondition("BEAT: this client has no wid");
  Result<FaktoryReply> r = Command("BEAT", "BEAT " + nlohmann::json({{"wid", wid_}}).dump());
  if (!r.ok()) return r.status();
  if (r->is_ok()) return std::string("OK");
  // The server sends {"state":"quiet"} as bulk (clients also accept it as a simple string).
  nlohmann::json state = nlohmann::json::parse(r->text, nullptr, false);
  if (state.is_object() && state.contains("state") && state["state"].is_string()) {
    return state["state"].get<std::string>();
  }
  return Status::Unavailable("BEAT: unexpected reply \"" + r->text + "\"");
}

Result<std::string> FaktoryClient::Info() {
  Result<FaktoryReply> r = Command("INFO", "INFO");
  if (!r.ok()) return r.status();
  if (r->kind != FaktoryReply::Kind::kBulk) {
    return Status::Unavailable("INFO: expected bulk JSON, got \"" + r->text + "\"");
  }
  return std::move(r->text);
}

Status FaktoryClient::Flush() { return ExpectOk("FLUSH", "FLUSH"); }

Status FaktoryClient::Mutate(std::string_view mutation_json) {
  // The reference server splits MUTATE lines on spaces: send the JSON compact.
  nlohmann::json body = nlohmann::json::parse(mutation_json, nullptr, false);
  if (body.is_discarded()) return Status::InvalidArgument("MUTATE: argument is not valid JSON");
  return ExpectOk("MUTATE", "MUTATE " + body.dump());
}

Status FaktoryClient::QueueCommand(std::string_view subcommand,
                                   const std::vector<std::string>& queues) {
  std::string verb = "QUEUE " + std::string(subcommand);
  return ExpectOk(verb, JoinQueues(verb, queues));
}

Result<std::string> FaktoryClient::QueueLatency(const std::vector<std::string>& queues) {
  Result<FaktoryReply> r = Command("QUEUE LATENCY", JoinQueues("QUEUE LATENCY", queues));
  if (!r.ok()) return r.status();
  if (r->kind != FaktoryReply::Kind::kBulk) {
    return Status::Unavailable("QUEUE LATENCY: expected bulk JSON, got \"" + r->text + "\"");
  }
  return std::move(r->text);
}

Status FaktoryClient::End() {
  Status s = WriteAll("END\r\n");
  CloseSocket();
  return s;
}

}  // namespace bulkhead
