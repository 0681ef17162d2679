#include "bulkhead/redis/redis_connection.h"

#include <hiredis/hiredis.h>

#include <array>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <charconv>
#include <deque>

namespace bulkhead {

namespace asio = boost::asio;
using asio::ip::tcp;

RedisConnectOptions RedisConnectOptions::ForUrl(const RedisUrl& url,
                                                const RedisEndpoint& endpoint) {
  RedisConnectOptions o;
  o.endpoint = endpoint;
  o.tls = url.tls();
  o.username = url.username;
  o.password = url.password;
  o.db = url.db;
  return o;
}

// Lifetime: RedisConnection owns the Impl through a shared_ptr, and every pending asynchronous
// operation holds another, so the Impl outlives the handlers that reference it. The destructor
// calls Shutdown(), which sets destroyed_, drops every user callback and closes the socket; each
// handler checks destroyed_ (and its transport generation) first, so nothing of the user's runs
// after destruction.
namespace {

struct Transport {
  std::unique_ptr<asio::ssl::context> context;  // TLS only; declared first: outlives `tls`
  std::unique_ptr<asio::ssl::stream<tcp::socket>> tls;
  std::unique_ptr<tcp::socket> plain;  // plain TCP only
  std::string in_flight;               // the bytes of the write in progress
  std::array<char, 64 * 1024> read_buf;

  tcp::socket& socket() { return tls ? tls->next_layer() : *plain; }
  void Close() {
    boost::system::error_code ignored;
    if (tls || plain) socket().close(ignored);
  }
};

}  // namespace

class RedisConnection::Impl : public std::enable_shared_from_this<Impl> {
  asio::io_context& io_;

 public:
  Impl(asio::io_context& io, RedisConnectOptions options)
      : io_(io), options_(std::move(options)), timer_(io), reply_timer_(io), keepalive_timer_(io) {
    name_ = "redis " + options_.endpoint.ToString();
  }
  ~Impl() { FreeReader(); }

  void Connect(DoneCallback done);
  void Send(const std::vector<std::string>& argv, ReplyCallback callback);
  void Subscribe(std::vector<std::string> channels, MessageHandler on_message, DoneCallback done);
  void Close();
  void Shutdown();

  enum class State { kIdle, kConnecting, kReady };
  State state_ = State::kIdle;
  LostHandler lost_handler_;
  struct Pending {
    ReplyCallback callback;
    std::chrono::steady_clock::time_point sent;
  };
  std::deque<Pending> pending_;
  RedisConnectOptions options_;

 private:
  void StartResolve(uint64_t gen);
  void StartTls(uint64_t gen);
  void TransportUp(uint64_t gen);
  void QueueSetupCommands();
  void BecomeReady();
  void StartRead();
  void OnRead(uint64_t gen, boost::system::error_code ec, size_t n);
  bool Dispatch(RedisReply reply);  // false when the connection was destroyed or reset
  void MaybeWrite();
  void Encode(const std::vector<std::string>& argv);
  void ResetTransport();
  void FailAll(DoneCallback done, std::deque<Pending> failed, const Status& cause);
  void Push(ReplyCallback callback);
  void ArmReplyTimer();
  void ArmKeepalive();
  void Lose(Status cause, bool report);
  void PostFailure(ReplyCallback cb, Status status);
  void FreeReader();
  Status Unavailable(const std::string& what) const {
    return Status::Unavailable(name_ + ": " + what);
  }

  std::string name_;
  asio::steady_timer timer_;
  asio::steady_timer reply_timer_;
  bool reply_timer_armed_ = false;
  asio::steady_timer keepalive_timer_;
  uint64_t gen_ = 0;  // transport generation: handlers of an older transport do nothing
  bool destroyed_ = false;
  bool transport_up_ = false;
  bool writing_ = false;
  bool subscribed_ = false;
  size_t setup_left_ = 0;  // AUTH/SELECT replies still awaited while connecting
  DoneCallback connect_done_;
  MessageHandler on_message_;
  // The current transport; each asynchronous operation holds it too, so a stream and its buffers
  // outlive every operation on them even when the connection moves on to a new transport.
  std::shared_ptr<Transport> t_;
  tcp::resolver resolver_{io_};
  redisReader* reader_ = nullptr;
  std::string out_;  // encoded commands not handed to a write yet
};

void RedisConnection::Impl::FreeReader() {
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = nullptr;
}

void RedisConnection::Impl::PostFailure(ReplyCallback cb, Status status) {
  asio::post(io_, [self = shared_from_this(), cb = std::move(cb), status = std::move(status)] {
    if (!self->destroyed_) cb(status);
  });
}

void RedisConnection::Impl::Connect(DoneCallback done) {
  if (state_ != State::kIdle) {
    asio::post(io_, [self = shared_from_this(), done = std::move(done), name = name_] {
      if (!self->destroyed_) done(Status::FailedPrecondition(name + ": Connect while not idle"));
    });
    return;
  }
  uint64_t gen = ++gen_;
  state_ = State::kConnecting;
  connect_done_ = std::move(done);
  subscribed_ = false;
  out_.clear();
  FreeReader();
  reader_ = redisReaderCreate();
  t_ = std::make_shared<Transport>();
  if (options_.tls) {
    t_->context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    boost::system::error_code ec;
    if (options_.tls_ca_file.empty()) {
      t_->context->set_default_verify_paths(ec);
    } else {
      t_->context->load_verify_file(options_.tls_ca_file, ec);
    }
    if (ec) {
      Status s = Status::InvalidArgument(name_ + ": cannot load the CA file '" +
                                         options_.tls_ca_file + "': " + ec.message());
      asio::post(io_, [self = shared_from_this(), gen, s] {
        if (!self->destroyed_ && gen == self->gen_) self->Lose(s, false);
      });
      return;
    }
    t_->context->set_verify_mode(asio::ssl::verify_peer);
    t_->tls = std::make_unique<asio::ssl::stream<tcp::socket>>(io_, *t_->context);
  } else {
    t_->plain = std::make_unique<tcp::socket>(io_);
  }
  QueueSetupCommands();
  timer_.expires_after(options_.connect_timeout);
  timer_.async_wait([self = shared_from_this(), gen](boost::system::error_code ec) {
    if (ec || self->destroyed_ || gen != self->gen_ || self->state_ != State::kConnecting) return;
    self->Lose(self->Unavailable("connect timed out after " +
                                 std::to_string(self->options_.connect_timeout.count()) + " ms"),
               false);
  });
  StartResolve(gen);
}

void RedisConnection::Impl::StartResolve(uint64_t gen) {
  resolver_.async_resolve(
      options_.endpoint.host, std::to_string(options_.endpoint.port),
      [self = shared_from_this(), gen, t = t_](boost::system::error_code ec,
                                               tcp::resolver::results_type results) {
        if (self->destroyed_ || gen != self->gen_) return;
        if (ec) {
          self->Lose(self->Unavailable("cannot resolve host: " + ec.message()), false);
          return;
        }
        asio::async_connect(t->socket(), results,
                            [self, gen, t](boost::system::error_code ec, const tcp::endpoint&) {
                              if (self->destroyed_ || gen != self->gen_) return;
                              if (ec) {
                                self->Lose(self->Unavailable("cannot connect: " + ec.message()),
                                           false);
                                return;
                              }
                              if (t->tls) {
                                self->StartTls(gen);
                              } else {
                                self->TransportUp(gen);
                              }
                            });
      });
}

void RedisConnection::Impl::StartTls(uint64_t gen) {
  const std::string& name =
      options_.tls_server_name.empty() ? options_.endpoint.host : options_.tls_server_name;
  boost::system::error_code ec;
  asio::ip::make_address(name, ec);
  if (ec) {  // a DNS name: send it as SNI (an IP address is not sent)
    SSL_set_tlsext_host_name(t_->tls->native_handle(), name.c_str());
  }
  t_->tls->set_verify_callback(asio::ssl::host_name_verification(name));
  t_->tls->async_handshake(asio::ssl::stream_base::client, [self = shared_from_this(), gen, name,
                                                            t = t_](boost::system::error_code ec) {
    if (self->destroyed_ || gen != self->gen_) return;
    if (ec) {
      self->Lose(
          self->Unavailable("TLS handshake failed (expected name '" + name + "'): " + ec.message()),
          false);
      return;
    }
    self->TransportUp(gen);
  });
}

void RedisConnection::Impl::TransportUp(uint64_t gen) {
  tcp::socket& socket = t_->socket();
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  socket.set_option(asio::socket_base::keep_alive(true), ignored);
  transport_up_ = true;
  StartRead();
  MaybeWrite();
  if (setup_left_ == 0) BecomeReady();
}

// AUTH and SELECT go first in the pipeline; commands sent while connecting queue behind them.
void RedisConnection::Impl::QueueSetupCommands() {
  setup_left_ = 0;
  auto step_done = [this] {
    if (--setup_left_ == 0 && transport_up_) BecomeReady();
  };
  if (!options_.password.empty()) {
    std::vector<std::string> argv = {"AUTH"};
    if (!options_.username.empty()) argv.push_back(options_.username);
    argv.push_back(options_.password);
    ++setup_left_;
    Encode(argv);
    Push([this, step_done](Result<RedisReply> r) {
      if (!r.ok() || state_ != State::kConnecting) return;  // Lose() reports transport failures
      if (r->is_error()) {
        Lose(Status::PermissionDenied(name_ + ": AUTH failed: " + r->str()), false);
        return;
      }
      step_done();
    });
  }
  if (options_.db != 0) {
    ++setup_left_;
    Encode({"SELECT", std::to_string(options_.db)});
    Push([this, step_done](Result<RedisReply> r) {
      if (!r.ok() || state_ != State::kConnecting) return;
      if (r->is_error()) {
        Lose(Status::InvalidArgument(name_ + ": SELECT " + std::to_string(options_.db) +
                                     " failed: " + r->str()),
             false);
        return;
      }
      step_done();
    });
  }
}

void RedisConnection::Impl::BecomeReady() {
  state_ = State::kReady;
  timer_.cancel();
  ArmKeepalive();
  DoneCallback done = std::move(connect_done_);
  connect_done_ = nullptr;
  if (done) done(Status::Ok());
}

void RedisConnection::Impl::StartRead() {
  auto handler = [self = shared_from_this(), gen = gen_, t = t_](
                     boost::system::error_code ec, size_t n) { self->OnRead(gen, ec, n); };
  if (t_->tls) {
    t_->tls->async_read_some(asio::buffer(t_->read_buf), std::move(handler));
  } else {
    t_->plain->async_read_some(asio::buffer(t_->read_buf), std::move(handler));
  }
}

void RedisConnection::Impl::OnRead(uint64_t gen, boost::system::error_code ec, size_t n) {
  if (destroyed_ || gen != gen_) return;
  if (ec) {
    std::string cause = ec == asio::error::eof ? "connection closed by the server" : ec.message();
    Lose(Unavailable("connection lost: " + cause), true);
    return;
  }
  if (redisReaderFeed(reader_, t_->read_buf.data(), n) != REDIS_OK) {
    Lose(Unavailable(std::string("protocol error: ") + reader_->errstr), true);
    return;
  }
  while (true) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
      Lose(Unavailable(std::string("protocol error: ") + reader_->errstr), true);
      return;
    }
    if (raw == nullptr) break;
    RedisReply reply = RedisReply::FromHiredis(*static_cast<redisReply*>(raw));
    freeReplyObject(raw);
    if (!Dispatch(std::move(reply))) return;
    if (destroyed_ || gen != gen_) return;
  }
  StartRead();
}

bool RedisConnection::Impl::Dispatch(RedisReply reply) {
  if (subscribed_ && reply.is_array() && reply.elements().size() == 3 &&
      reply.elements()[0].Is("message")) {
    if (on_message_) on_message_(reply.elements()[1].str(), reply.elements()[2].str());
    return true;
  }
  if (pending_.empty()) {
    Lose(Unavailable("protocol error: a reply that no command awaits: " + reply.ToString()), true);
    return false;
  }
  ReplyCallback cb = std::move(pending_.front().callback);
  pending_.pop_front();
  cb(std::move(reply));
  return true;
}

void RedisConnection::Impl::Encode(const std::vector<std::string>& argv) {
  // The RESP array of bulk strings redisFormatCommandArgv would write, straight into out_: no
  // buffer of its own and no sprintf per argument (a batched script call has hundreds).
  auto append_header = [this](char kind, size_t n) {
    char buf[24];
    buf[0] = kind;
    char* end = std::to_chars(buf + 1, buf + sizeof(buf) - 2, n).ptr;
    *end++ = '\r';
    *end++ = '\n';
    out_.append(buf, static_cast<size_t>(end - buf));
  };
  append_header('*', argv.size());
  for (const std::string& a : argv) {
    append_header('$', a.size());
    out_.append(a);
    out_.append("\r\n", 2);
  }
}

void RedisConnection::Impl::MaybeWrite() {
  if (writing_ || !transport_up_ || out_.empty()) return;
  writing_ = true;
  t_->in_flight.swap(out_);
  out_.clear();
  auto handler = [self = shared_from_this(), gen = gen_, t = t_](boost::system::error_code ec,
                                                                 size_t) {
    if (self->destroyed_ || gen != self->gen_) return;
    self->writing_ = false;
    t->in_flight.clear();
    if (ec) {
      self->Lose(self->Unavailable("connection lost: write failed: " + ec.message()), true);
      return;
    }
    self->MaybeWrite();
  };
  if (t_->tls) {
    asio::async_write(*t_->tls, asio::buffer(t_->in_flight), std::move(handler));
  } else {
    asio::async_write(*t_->plain, asio::buffer(t_->in_flight), std::move(handler));
  }
}

void RedisConnection::Impl::Push(ReplyCallback callback) {
  pending_.push_back({std::move(callback), std::chrono::steady_clock::now()});
  ArmReplyTimer();
}

// One timer for the oldest unanswered command: when it fires and that command is still
// unanswered after reply_timeout, the peer is taken for gone.
void RedisConnection::Impl::ArmReplyTimer() {
  if (options_.reply_timeout.count() <= 0 || reply_timer_armed_ || pending_.empty()) return;
  reply_timer_armed_ = true;
  reply_timer_.expires_at(pending_.front().sent + options_.reply_timeout);
  reply_timer_.async_wait([self = shared_from_this(), gen = gen_](boost::system::error_code ec) {
    if (ec || self->destroyed_ || gen != self->gen_) return;
    self->reply_timer_armed_ = false;
    if (!self->pending_.empty() && self->pending_.front().sent + self->options_.reply_timeout <=
                                       std::chrono::steady_clock::now()) {
      self->Lose(self->Unavailable("no reply within " +
                                   std::to_string(self->options_.reply_timeout.count()) + " ms"),
                 true);
      return;
    }
    self->ArmReplyTimer();
  });
}

// Every keepalive_every while ready: a PING when nothing is unanswered (otherwise the reply timer
// already watches the oldest command).
void RedisConnection::Impl::ArmKeepalive() {
  if (options_.keepalive_every.count() <= 0) return;
  keepalive_timer_.expires_after(options_.keepalive_every);
  keepalive_timer_.async_wait(
      [self = shared_from_this(), gen = gen_](boost::system::error_code ec) {
        if (ec || self->destroyed_ || gen != self->gen_ || self->state_ != State::kReady) return;
        if (self->pending_.empty()) {
          self->Encode({"PING"});
          self->Push([](Result<RedisReply>) {});  // a loss reaches the lost handler
          self->MaybeWrite();
        }
        self->ArmKeepalive();
      });
}

void RedisConnection::Impl::Send(const std::vector<std::string>& argv, ReplyCallback callback) {
  if (argv.empty()) {
    PostFailure(std::move(callback), Status::InvalidArgument(name_ + ": empty command"));
    return;
  }
  if (state_ == State::kIdle) {
    PostFailure(std::move(callback), Unavailable("not connected"));
    return;
  }
  if (subscribed_ && !boost::algorithm::iequals(argv[0], "PING")) {
    PostFailure(std::move(callback),
                Status::FailedPrecondition(name_ + ": Send on a subscriber connection"));
    return;
  }
  Encode(argv);
  Push(std::move(callback));
  MaybeWrite();
}

void RedisConnection::Impl::Subscribe(std::vector<std::string> channels, MessageHandler on_message,
                                      DoneCallback done) {
  if (state_ == State::kIdle || channels.empty()) {
    Status s = channels.empty() ? Status::InvalidArgument(name_ + ": SUBSCRIBE without channels")
                                : Unavailable("not connected");
    PostFailure([done = std::move(done)](Result<RedisReply> r) { done(r.status()); }, s);
    return;
  }
  subscribed_ = true;
  on_message_ = std::move(on_message);
  std::vector<std::string> argv = {"SUBSCRIBE"};
  argv.insert(argv.end(), channels.begin(), channels.end());
  Encode(argv);
  // Redis confirms each channel with its own ["subscribe", channel, count] reply.
  auto left = std::make_shared<size_t>(channels.size());
  auto shared_done = std::make_shared<DoneCallback>(std::move(done));
  for (size_t i = 0; i < channels.size(); ++i) {
    Push([this, left, shared_done](Result<RedisReply> r) {
      if (*shared_done == nullptr) return;
      DoneCallback d;
      if (!r.ok()) {
        d = std::move(*shared_done);
        *shared_done = nullptr;
        d(r.status());
      } else if (r->is_error()) {
        d = std::move(*shared_done);
        *shared_done = nullptr;
        d(Status::FailedPrecondition(name_ + ": SUBSCRIBE failed: " + r->str()));
      } else if (--*left == 0) {
        d = std::move(*shared_done);
        *shared_done = nullptr;
        d(Status::Ok());
      }
    });
  }
  MaybeWrite();
}

void RedisConnection::Impl::ResetTransport() {
  ++gen_;
  state_ = State::kIdle;
  transport_up_ = false;
  writing_ = false;
  subscribed_ = false;
  out_.clear();
  timer_.cancel();
  reply_timer_.cancel();
  reply_timer_armed_ = false;
  keepalive_timer_.cancel();
  resolver_.cancel();
  if (t_) t_->Close();
}

void RedisConnection::Impl::FailAll(DoneCallback done, std::deque<Pending> failed,
                                    const Status& cause) {
  std::shared_ptr<Impl> keep = shared_from_this();
  if (done) {
    done(cause);
    if (destroyed_) return;
  }
  Status unavailable =
      cause.code() == StatusCode::kUnavailable ? cause : Unavailable(cause.message());
  for (Pending& p : failed) {
    p.callback(unavailable);
    if (destroyed_) return;
  }
}

// Callbacks run inline here, so Lose is only called from a handler (already a later turn).
void RedisConnection::Impl::Lose(Status cause, bool report) {
  bool was_ready = state_ == State::kReady;
  ResetTransport();
  uint64_t gen = gen_;
  DoneCallback done = std::move(connect_done_);
  connect_done_ = nullptr;
  std::deque<Pending> failed;
  failed.swap(pending_);
  std::shared_ptr<Impl> keep = shared_from_this();
  FailAll(std::move(done), std::move(failed), cause);
  if (destroyed_) return;
  // Not when a callback above reconnected already: the owner knows.
  if (report && was_ready && gen == gen_ && lost_handler_) lost_handler_(cause);
}

void RedisConnection::Impl::Close() {
  if (state_ == State::kIdle) return;
  auto done = std::make_shared<DoneCallback>(std::move(connect_done_));
  connect_done_ = nullptr;
  auto failed = std::make_shared<std::deque<Pending>>();
  failed->swap(pending_);
  ResetTransport();
  asio::post(io_, [self = shared_from_this(), done, failed] {
    if (self->destroyed_) return;
    self->FailAll(std::move(*done), std::move(*failed), self->Unavailable("connection closed"));
  });
}

void RedisConnection::Impl::Shutdown() {
  destroyed_ = true;
  pending_.clear();
  connect_done_ = nullptr;
  lost_handler_ = nullptr;
  on_message_ = nullptr;
  ResetTransport();
}

RedisConnection::RedisConnection(asio::io_context& io, RedisConnectOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

RedisConnection::~RedisConnection() { impl_->Shutdown(); }

void RedisConnection::Connect(DoneCallback done) { impl_->Connect(std::move(done)); }

void RedisConnection::Send(const std::vector<std::string>& argv, ReplyCallback callback) {
  impl_->Send(argv, std::move(callback));
}

void RedisConnection::Subscribe(std::vector<std::string> channels, MessageHandler on_message,
                                DoneCallback done) {
  impl_->Subscribe(std::move(channels), std::move(on_message), std::move(done));
}

void RedisConnection::Close() { impl_->Close(); }

void RedisConnection::SetLostHandler(LostHandler handler) {
  impl_->lost_handler_ = std::move(handler);
}

bool RedisConnection::ready() const { return impl_->state_ == Impl::State::kReady; }
bool RedisConnection::idle() const { return impl_->state_ == Impl::State::kIdle; }
size_t RedisConnection::pending() const { return impl_->pending_.size(); }
const RedisConnectOptions& RedisConnection::options() const { return impl_->options_; }

}  // namespace bulkhead
