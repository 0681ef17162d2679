// Session: one FWP client connection. Runs command lines in the order received and answers them in
// that order. A command that waits only for durability (PUSH, ACK, FAIL…) does not hold up the
// commands pipelined behind it, so they share one group commit; a FETCH that blocks is a barrier:
// nothing after it runs until it is answered, except the FETCHes right behind it, which run at once
// (Command::overlaps_itself) so that they reach the store together. Replies ready together go out
// in one write.
//
// Output is bounded: while more than unsent_replies_pause_bytes of replies wait to be sent, the
// session reads no further commands (a client that never reads stops being served, not the
// server's memory); past Config::UnsentReplyCap() the connection is closed and logged.
//
// Lifetime: owned by shared_ptr; pending callbacks (a durable PUSH, a blocked FETCH) hold a
// reference, so a session outlives its socket until they run. Close() is idempotent.
// Threading: event loop thread only.
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/protocol/fwp_stream.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

struct Command;
class FwpServer;
class Session;

// The one reply to one command; may be used after the handler returned. Replying twice, or not at
// all, is a bug.
class Responder {
 public:
  Responder(std::shared_ptr<Session> session, uint64_t seq)
      : session_(std::move(session)), seq_(seq) {}
  void Ok();
  // "-ERR message", or "-CODE message" for a coded error (Faktory's NOTUNIQUE).
  void Error(std::string_view message, std::string_view code = "ERR");
  void Bulk(std::string_view bytes);
  void Null();
  // No reply; the connection closes (END).
  void CloseQuietly();
  // An error reply, then the connection closes.
  void ErrorAndClose(std::string_view message);

 private:
  std::shared_ptr<Session> session_;
  uint64_t seq_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(FwpStream stream, FwpServer& server, uint64_t id);
  ~Session();

  // Completes the TLS handshake (a TLS stream), sends the greeting and starts reading.
  // `over_limit`: the connection is past the connection cap; its HELLO will be refused.
  void Start(bool over_limit);
  void Close();
  // Closes once the replies already made ready have been written (at most line_timeout_seconds
  // later), withdrawing the FETCHes still waiting in the engine and reading nothing more. For a
  // worker the server drops: a FETCH answered with a job just before still reaches the worker,
  // instead of leaving the job reserved until its reservation expires.
  void CloseAfterReplies();

  uint64_t id() const { return id_; }
  // The client's IP address ("" when the socket had none).
  const std::string& peer() const { return peer_; }
  FwpServer& server() { return server_; }
  bool identified() const { return identified_; }
  const std::string& wid() const { return wid_; }
  const std::string& salt() const { return salt_; }
  int iterations() const { return iterations_; }
  bool over_limit() const { return over_limit_; }
  void SetIdentified(std::string wid) {
    identified_ = true;
    wid_ = std::move(wid);
  }
  // The ticket of the FETCH being dispatched, waiting in the engine (cancelled if the connection
  // closes before it is answered).
  void SetFetchTicket(uint64_t ticket);

 private:
  friend class Responder;

  void Greet();
  // Cancels the FETCHes waiting in the engine (a job reserved for one after all goes back).
  void WithdrawWaitingFetches();
  void DoRead();
  void ProcessBuffer();
  // Runs one command line as its table entry says (commands.h). A command whose reply may come
  // later (may_block) becomes a barrier: the session runs no further line until it is answered,
  // unless the line is the same command and that command overlaps_itself.
  void Dispatch(std::string_view line, uint64_t seq);
  // True while a barrier is unanswered and `line` must wait for it (any line but the barrier's own
  // command when it overlaps itself, and that one too past 128 unanswered).
  bool HeldByBarrier(std::string_view line) const;
  // Sends the replies made ready since the last write, then goes on reading; posted once per turn
  // of the loop, so that the answers a store gives in one turn leave in one write.
  void FlushLater();
  // Called by Responder: stores the reply of command `seq`, sends every reply now in order, and
  // resumes processing when a barrier was answered.
  void Complete(uint64_t seq, std::string reply, bool close_after);
  void MaybeWrite();
  void ArmLineTimer();
  // Reply bytes produced and not yet written to the socket.
  size_t UnsentReplyBytes() const { return out_.size() + writing_buf_.size(); }
  bool PausedForOutput() const;

  FwpStream stream_;
  bool tls_established_ = false;
  FwpServer& server_;
  const uint64_t id_;
  std::string peer_;
  Timer handshake_timer_;  // on the engine's clock, as every timer below
  Timer line_timer_;
  bool line_timer_armed_ = false;
  uint64_t bytes_read_ = 0;         // every byte received on this connection
  uint64_t bytes_read_at_arm_ = 0;  // bytes_read_ when line_timer_ was last armed
  Timer closing_timer_;             // CloseAfterReplies' bound

  std::array<char, 64 * 1024> read_buf_;
  std::string in_;           // bytes received, not yet consumed
  size_t scan_from_ = 0;     // no '\n' in in_[0, scan_from_)
  std::string out_;          // replies not yet handed to a write
  std::string writing_buf_;  // the write in progress
  bool reading_ = false;
  bool writing_ = false;
  // Replies of commands not yet sent, oldest first; slots_[0] is command number first_seq_, so
  // the next command is number first_seq_ + slots_.size().
  struct Slot {
    bool ready = false;
    bool close_after = false;
    std::string reply;
  };
  std::deque<Slot> slots_;
  uint64_t first_seq_ = 0;
  // The barriers not answered yet, oldest first: command numbers of one command (consecutive
  // lines of barrier_command_), each with its engine ticket while it waits (0: none).
  struct Barrier {
    uint64_t seq = 0;
    uint64_t fetch_ticket = 0;
  };
  std::vector<Barrier> barriers_;
  const Command* barrier_command_ = nullptr;
  uint64_t dispatching_seq_ = 0;  // the command whose handler runs
  bool flush_posted_ = false;
  bool processing_ = false;  // inside ProcessBuffer (replies are coalesced)
  bool close_after_write_ = false;
  bool closed_ = false;

  bool identified_ = false;
  bool over_limit_ = false;
  std::string wid_;
  std::string salt_;
  int iterations_ = 1;
};

}  // namespace bulkhead
