#include "bulkhead/protocol/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "bulkhead/protocol/commands.h"
#include "bulkhead/protocol/fwp_server.h"
#include "bulkhead/protocol/replies.h"
#include "bulkhead/protocol/resp.h"

namespace bulkhead {

namespace asio = boost::asio;

namespace {
// The least rate at which a half-sent line keeps its connection past line_timeout_seconds.
constexpr uint64_t kMinLineBytesPerSecond = 1024;
}  // namespace

void Responder::Ok() {
  std::string r;
  resp::AppendSimple(r, replies::kOk);
  session_->Complete(seq_, std::move(r), false);
}
void Responder::Error(std::string_view message, std::string_view code) {
  std::string r;
  resp::AppendError(r, message, code);
  session_->Complete(seq_, std::move(r), false);
}
void Responder::Bulk(std::string_view bytes) {
  std::string r;
  resp::AppendBulk(r, bytes);
  session_->Complete(seq_, std::move(r), false);
}
void Responder::Null() {
  std::string r;
  resp::AppendNull(r);
  session_->Complete(seq_, std::move(r), false);
}
void Responder::CloseQuietly() { session_->Complete(seq_, std::string(), true); }
void Responder::ErrorAndClose(std::string_view message) {
  std::string r;
  resp::AppendError(r, message);
  session_->Complete(seq_, std::move(r), true);
}

Session::Session(FwpStream stream, FwpServer& server, uint64_t id)
    : stream_(std::move(stream)),
      server_(server),
      id_(id),
      handshake_timer_(server.io(), server.engine().clock()),
      line_timer_(server.io(), server.engine().clock()),
      closing_timer_(server.io(), server.engine().clock()) {
  boost::system::error_code ec;
  auto endpoint = stream_.socket().remote_endpoint(ec);
  if (!ec) peer_ = endpoint.address().to_string();
}

bool Session::PausedForOutput() const {
  return UnsentReplyBytes() >= static_cast<size_t>(server_.config().unsent_replies_pause_bytes);
}

Session::~Session() = default;

void Session::Start(bool over_limit) {
  over_limit_ = over_limit;
  if (!stream_.tls()) {
    Greet();
    return;
  }
  // The TLS handshake shares the HELLO deadline's length; nothing can be said in clear text to a
  // client that does not finish it.
  auto self = shared_from_this();
  handshake_timer_.ExpiresAfter(std::chrono::seconds(server_.config().handshake_timeout_seconds));
  handshake_timer_.AsyncWait([this, self](boost::system::error_code ec) {
    if (ec || tls_established_ || closed_) return;
    server_.NoteTlsHandshakeFailure(
        peer_, "no TLS handshake within " +
                   std::to_string(server_.config().handshake_timeout_seconds) + " s");
    Close();
  });
  stream_.AsyncHandshake([this, self](boost::system::error_code ec) {
    if (closed_) return;
    if (ec) {
      // A connection closed before it sent anything (a TCP health check, a port probe) is not a
      // failed handshake.
      if (ec != asio::ssl::error::stream_truncated && ec != asio::error::eof) {
        server_.NoteTlsHandshakeFailure(peer_, ec.message());
      }
      Close();
      return;
    }
    tls_established_ = true;
    handshake_timer_.Cancel();
    Greet();
  });
}

void Session::Greet() {
  std::string hi = "HI {\"v\":2";
  if (!server_.config().password.empty()) {
    // Salt: random 63-bit integer in hex; iterations in 4000..8095 (as the reference server).
    char salt[32];
    std::snprintf(salt, sizeof(salt), "%llx",
                  static_cast<unsigned long long>(server_.rng().Next64() >> 1));
    salt_ = salt;
    iterations_ = 4000 + static_cast<int>(server_.rng().Uniform(4096));
    hi += ",\"i\":" + std::to_string(iterations_) + ",\"s\":\"" + salt_ + "\"";
  }
  hi += "}";
  resp::AppendSimple(out_, hi);
  MaybeWrite();
  auto self = shared_from_this();
  handshake_timer_.ExpiresAfter(std::chrono::seconds(server_.config().handshake_timeout_seconds));
  handshake_timer_.AsyncWait([this, self](boost::system::error_code ec) {
    if (ec || identified_ || closed_) return;
    resp::AppendError(out_, std::string(replies::kHandshakeTimeout) +
                                std::to_string(server_.config().handshake_timeout_seconds) + " s");
    close_after_write_ = true;
    MaybeWrite();
  });
  DoRead();
}

void Session::Close() {
  if (closed_) return;
  closed_ = true;
  handshake_timer_.Cancel();
  line_timer_.Cancel();
  closing_timer_.Cancel();
  WithdrawWaitingFetches();
  stream_.Close();
  server_.OnSessionClosed(id_, identified_ ? wid_ : std::string());
}

void Session::WithdrawWaitingFetches() {
  for (const Barrier& b : barriers_) {
    if (b.fetch_ticket != 0) server_.engine().CancelFetch(b.fetch_ticket);
  }
  barriers_.clear();
}

void Session::CloseAfterReplies() {
  if (closed_ || close_after_write_) return;
  WithdrawWaitingFetches();
  close_after_write_ = true;
  auto self = shared_from_this();
  closing_timer_.ExpiresAfter(std::chrono::seconds(server_.config().line_timeout_seconds));
  closing_timer_.AsyncWait([this, self](boost::system::error_code ec) {
    if (!ec) Close();  // the client does not read what it was sent
  });
  MaybeWrite();
}

void Session::DoRead() {
  if (reading_ || closed_ || close_after_write_) return;
  reading_ = true;
  auto self = shared_from_this();
  stream_.AsyncReadSome(asio::buffer(read_buf_),
                        [this, self](boost::system::error_code ec, size_t n) {
                          reading_ = false;
                          if (ec) {
                            Close();  // EOF or reset: nothing to answer
                            return;
                          }
                          in_.append(read_buf_.data(), n);
                          bytes_read_ += n;
                          ProcessBuffer();
                        });
}

// A half-sent line must complete within line_timeout_seconds, unless it keeps arriving at
// kMinLineBytesPerSecond or more: a client that stalls mid-line (slowloris) is cut off, a large
// PUSHB read slowly by a busy server is not. Each period of line_timeout_seconds that brought at
// least that rate of bytes starts another (a line is bounded by max_line_bytes anyway).
void Session::ArmLineTimer() {
  if (line_timer_armed_) return;
  line_timer_armed_ = true;
  bytes_read_at_arm_ = bytes_read_;
  auto self = shared_from_this();
  const int seconds = server_.config().line_timeout_seconds;
  line_timer_.ExpiresAfter(std::chrono::seconds(seconds));
  line_timer_.AsyncWait([this, self, seconds](boost::system::error_code ec) {
    line_timer_armed_ = false;
    if (ec || closed_) return;
    // The line completed meanwhile, or we are not reading (a barrier, or replies the client has
    // not taken yet): the rest of the line may be sitting unread in the socket.
    if (in_.empty() || !barriers_.empty() || PausedForOutput()) return;
    if (bytes_read_ - bytes_read_at_arm_ >=
        kMinLineBytesPerSecond * static_cast<uint64_t>(seconds)) {
      ArmLineTimer();  // still arriving
      return;
    }
    resp::AppendError(out_, replies::kLineTimeout);
    close_after_write_ = true;
    MaybeWrite();
  });
}

namespace {
// Replies not yet sent per connection; past it the session stops reading until some are sent.
constexpr size_t kMaxCommandsInFlight = 4096;
// A write buffer that grew past this (one large reply) is released after the write.
constexpr size_t kKeptBufferBytes = 256 * 1024;
// Unanswered FETCHes that may overlap per connection (each holds a waiter and its timer in the
// engine while its queues are empty); further FETCHes wait as any other line does.
constexpr size_t kMaxOverlappingBarriers = 128;
// Bytes read ahead while a complete line waits for a barrier (then reading stops until it is
// answered).
constexpr size_t kHeldReadBytes = 64 * 1024;
}  // namespace

void Session::ProcessBuffer() {
  if (closed_) return;
  processing_ = true;
  size_t consumed = 0;
  bool held = false;  // a complete line waits for a barrier
  while (!closed_ && !close_after_write_ && slots_.size() < kMaxCommandsInFlight &&
         !PausedForOutput()) {
    size_t nl = in_.find('\n', std::max(scan_from_, consumed));
    if (nl == std::string::npos) {
      scan_from_ = in_.size();
      break;
    }
    size_t end = nl;
    if (end > consumed && in_[end - 1] == '\r') --end;
    std::string_view line(in_.data() + consumed, end - consumed);
    if (HeldByBarrier(line)) {
      held = true;
      break;
    }
    consumed = nl + 1;
    if (line.size() > static_cast<size_t>(server_.config().max_line_bytes)) {
      resp::AppendError(out_, std::string(replies::kLineTooLong) +
                                  std::to_string(server_.config().max_line_bytes) + " bytes");
      close_after_write_ = true;
      break;
    }
    uint64_t seq = first_seq_ + slots_.size();
    slots_.emplace_back();
    Dispatch(line, seq);
  }
  if (consumed > 0) {
    in_.erase(0, consumed);
    scan_from_ = scan_from_ > consumed ? scan_from_ - consumed : 0;
  }
  processing_ = false;
  if (!held && !close_after_write_ && !closed_) {
    if (in_.size() > static_cast<size_t>(server_.config().max_line_bytes)) {
      resp::AppendError(out_, std::string(replies::kLineTooLong) +
                                  std::to_string(server_.config().max_line_bytes) + " bytes");
      close_after_write_ = true;
    } else if (!in_.empty() && !PausedForOutput()) {
      ArmLineTimer();  // a partial line: it must complete in time
    } else if (line_timer_armed_) {
      line_timer_.Cancel();
    }
  }
  MaybeWrite();
  // Reading goes on behind a barrier too (more FETCHes may come), and while lines wait for it, up
  // to kHeldReadBytes of them: a client that closes while its FETCH waits is noticed at once, and
  // its FETCH withdrawn before it takes a job nobody will receive.
  if ((!held || in_.size() < kHeldReadBytes) && slots_.size() < kMaxCommandsInFlight &&
      !PausedForOutput()) {
    DoRead();
  }
}

bool Session::HeldByBarrier(std::string_view line) const {
  if (barriers_.empty()) return false;
  if (!barrier_command_->overlaps_itself || barriers_.size() >= kMaxOverlappingBarriers) {
    return true;
  }
  return line.substr(0, line.find(' ')) != barrier_command_->verb;
}

void Session::SetFetchTicket(uint64_t ticket) {
  for (Barrier& b : barriers_) {
    if (b.seq == dispatching_seq_) b.fetch_ticket = ticket;
  }
}

void Session::Dispatch(std::string_view line, uint64_t seq) {
  server_.CountCommand();
  size_t space = line.find(' ');
  std::string_view verb = line.substr(0, space);
  std::string_view args =
      space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  const Command* command = FindCommand(verb);
  Responder responder(shared_from_this(), seq);
  switch (Admit(command, args, identified_, server_.stopping())) {
    case Admission::kRun:
      // A command whose reply may come later is a barrier before its handler runs; its reply
      // lifts it (Complete), whether the handler gives it before returning or a store answers
      // on a later turn of the loop.
      if (command->may_block) {
        barriers_.push_back(Barrier{seq});
        barrier_command_ = command;
      }
      dispatching_seq_ = seq;
      command->handler(*this, args, std::move(responder));
      return;
    case Admission::kCloseQuietly:
      responder.CloseQuietly();
      return;
    case Admission::kShuttingDown:
      responder.Error(replies::kShutdown);
      return;
    case Admission::kUnknown:
      responder.Error(std::string(replies::kUnknownCommand) + std::string(verb));
      return;
    case Admission::kEnterpriseOnly:
      responder.Error(command->enterprise_only);
      return;
  }
}

void Session::Complete(uint64_t seq, std::string reply, bool close_after) {
  if (closed_ || seq < first_seq_ || seq - first_seq_ >= slots_.size()) return;
  Slot& slot = slots_[seq - first_seq_];
  slot.ready = true;
  slot.reply = std::move(reply);
  slot.close_after = close_after;
  // Send every reply whose predecessors are all answered.
  while (!slots_.empty() && slots_.front().ready && !close_after_write_) {
    out_ += slots_.front().reply;
    if (slots_.front().close_after) close_after_write_ = true;
    slots_.pop_front();
    ++first_seq_;
  }
  if (UnsentReplyBytes() > static_cast<size_t>(server_.config().UnsentReplyCap())) {
    GuardCounters::Bump(server_.guards().fwp_unsent_replies);
    if (auto dropped = server_.log_limiter().Admit("unsent-replies")) {
      spdlog::warn(
          "connection {} from {} closed: {} bytes of replies unsent, past the limit of {} "
          "(max_unsent_reply_bytes); the client sends commands without reading the "
          "replies{}",
          id_, peer_, UnsentReplyBytes(), server_.config().UnsentReplyCap(),
          LogLimiter::SuppressedNote(*dropped));
    }
    Close();
    return;
  }
  if (auto b = std::find_if(barriers_.begin(), barriers_.end(),
                            [seq](const Barrier& x) { return x.seq == seq; });
      b != barriers_.end()) {
    barriers_.erase(b);
  }
  if (processing_) return;  // ProcessBuffer continues and writes once for all replies
  FlushLater();
}

void Session::FlushLater() {
  if (flush_posted_) return;
  flush_posted_ = true;
  asio::post(server_.io(), [this, self = shared_from_this()] {
    flush_posted_ = false;
    if (closed_) return;
    MaybeWrite();
    // Resume: a barrier may have been answered, or the in-flight limit may have stopped reading.
    if (!close_after_write_) ProcessBuffer();
  });
}

void Session::MaybeWrite() {
  if (writing_ || closed_) return;
  if (out_.empty()) {
    if (close_after_write_) Close();
    return;
  }
  writing_ = true;
  writing_buf_.swap(out_);
  out_.clear();
  auto self = shared_from_this();
  stream_.AsyncWrite(asio::buffer(writing_buf_),
                     [this, self](boost::system::error_code ec, size_t) {
                       writing_ = false;
                       bool was_paused = PausedForOutput();
                       writing_buf_.clear();
                       if (writing_buf_.capacity() > kKeptBufferBytes) {
                         writing_buf_.shrink_to_fit();  // a large reply's buffer is not kept
                       }
                       if (ec) {
                         Close();
                         return;
                       }
                       MaybeWrite();
                       // Reading stopped while replies piled up: resume once they drained.
                       if (was_paused && !PausedForOutput() && !closed_ && !close_after_write_) {
                         ProcessBuffer();
                       }
                     });
}

}  // namespace bulkhead
