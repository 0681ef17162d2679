// SqliteChangeLog's redo log: what the event loop logs and answers, how the writer gathers and
// resets it, and its replay at open (see "Who commits" in sqlite_change_log.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "bulkhead/store/sqlite_change_log.h"

namespace bulkhead {
namespace {

// Signing keys go to the database only: the redo log holds no private key.
bool Loggable(const std::vector<Change>& changes) {
  return std::none_of(changes.begin(), changes.end(),
                      [](const Change& c) { return c.kind == Change::Kind::kPutSigningKey; });
}

}  // namespace

bool SqliteChangeLog::LoopMayLogLocked() const {
  return redo_ && !redo_full_ && !stopping_ && !failed_.load(std::memory_order_relaxed);
}

bool SqliteChangeLog::UrgentLocked() const {
  // Changes the loop has not seen and will not log (see TakeBatchLocked).
  bool unseen = logged_ < pending_.size() && !(flush_posted_ && LoopMayLogLocked());
  // Many changes, once the writer may take some (not while all wait for the loop's flush).
  bool many = pending_changes_ >= kRedoGatherMaxChanges && (logged_ > 0 || unseen);
  // A held answer alone is not: the loop gives it once the answers before it arrive.
  return unseen || many || pending_reads_ || pending_unlogged_ || !new_tasks_.empty() || stopping_;
}

void SqliteChangeLog::LogLocked(std::vector<std::function<void(Status)>>& answers) {
  std::vector<const std::vector<Change>*> parts;
  for (size_t i = logged_; i < pending_.size(); ++i) {
    if (!pending_[i].read && Loggable(pending_[i].changes)) parts.push_back(&pending_[i].changes);
  }
  Status s = parts.empty() ? Status::Ok() : redo_->Append(redo_seq_ + 1, parts);
  if (s.code() == StatusCode::kResourceExhausted) {
    // No room until the writer commits the other region's records: these wait for its commit.
    // The loop does not log again until then, so each fill is counted once; logged at most once
    // a minute (an overloaded disk fills it again and again).
    ++redo_fills_;
    redo_full_ = true;
    if (redo_full_log_.Admit("full")) {
      spdlog::warn(
          "sqlite store {}: the redo log is full (the writer is a whole region behind); changes "
          "wait for its commits until it catches up ({} times since the start)",
          path_, redo_fills_);
    }
  } else if (!s.ok()) {
    // Left unlogged: the writer answers them with this failure.
    FailLocked(s, "redo log write for");
  }
  bool logged = s.ok() && !parts.empty();
  if (logged) ++redo_seq_;
  // An answer owed before a change (the writer's, or one still queued) comes before its own.
  bool owed = pending_owes_ || answers_in_flight_->load(std::memory_order_relaxed) != 0;
  for (size_t i = logged_; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (!p.read && logged && Loggable(p.changes)) {
      p.redo_seq = redo_seq_;
      pending_logged_ = true;
      if (!owed) {
        answers.push_back(std::exchange(p.durable, nullptr));
        continue;
      }
    } else if (!p.read) {
      pending_unlogged_ = true;
    }
    pending_reads_ = pending_reads_ || p.read;
    if (OwesInOrder(p)) owed = pending_owes_ = true;
  }
  logged_ = pending_.size();
}

void SqliteChangeLog::FlushOnLoop() {
  std::vector<std::function<void(Status)>> answers;
  Next next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    flush_posted_ = false;
    if (logged_ < pending_.size() && LoopMayLogLocked()) LogLocked(answers);
    next = ScheduleLocked();
  }
  Run(next);
  // Logged: answered now, on the loop, in the order appended (changes these callbacks append
  // go into the next turn's record).
  for (auto& answer : answers) {
    if (answer) answer(Status::Ok());
  }
}

void SqliteChangeLog::AnswerHeldOnLoop() {
  std::vector<std::function<void(Status)>> answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pending_owes_ || answers_in_flight_->load(std::memory_order_relaxed) != 0) return;
    size_t i = settled_;
    for (; i < logged_; ++i) {
      Pending& p = pending_[i];
      if ((p.read && !p.ahead) || (p.redo_seq == 0 && p.durable)) break;  // the writer's still
      if (p.durable) answers.push_back(std::exchange(p.durable, nullptr));
    }
    settled_ = i;
    pending_owes_ = i < logged_;
  }
  // Logged: durable already (changes these callbacks append go into the next turn's record).
  for (auto& answer : answers) answer(Status::Ok());
}

void SqliteChangeLog::GatherLocked(std::unique_lock<std::mutex>& lock) {
  // The transaction to come is due gather_delay_ after the writer first finds work for it.
  if (!txn_open_) txn_deadline_ = std::chrono::steady_clock::now() + gather_delay_;
  if (!redo_ || UrgentLocked()) return;
  gathering_ = true;
  cv_.wait_until(lock, txn_deadline_, [&] { return UrgentLocked(); });
  gathering_ = false;
}

void SqliteChangeLog::FreeCommittedRedo() {
  std::lock_guard<std::mutex> lock(mu_);
  // After a failed commit nothing more is committed: the records stay for the next open.
  if (!redo_ || failed_.load(std::memory_order_relaxed)) return;
  if (redo_->Committed(redo_committed_)) redo_full_ = false;
}

uint64_t SqliteChangeLog::redo_fills() const {
  std::lock_guard<std::mutex> lock(mu_);
  return redo_fills_;
}

Status SqliteChangeLog::ReplayRedo(int64_t db_redo_seq) {
  const std::string todo =
      "Keep a copy of " + RedoPath() +
      ". To start without the changes it still holds (those "
      "answered after the database's last commit), move it away and start again";
  auto contents = RedoLog::Read(RedoPath());
  if (!contents.ok())
    return Damaged("has a damaged redo log: " + contents.status().message(), todo);
  redo_seq_ = db_redo_seq;
  std::vector<Pending> batch;
  size_t changes = 0;
  for (RedoLog::Record& record : contents->records) {
    if (record.seq <= db_redo_seq) continue;  // committed already
    if (record.seq != redo_seq_ + 1) {
      return Damaged("has a redo log, " + RedoPath() + ", that jumps from record " +
                         std::to_string(redo_seq_) + " to " + std::to_string(record.seq) +
                         ": records answered as durable are missing",
                     todo);
    }
    redo_seq_ = record.seq;
    changes += record.changes.size();
    Pending p;
    p.changes = std::move(record.changes);
    p.redo_seq = record.seq;
    batch.push_back(std::move(p));
  }
  if (batch.empty()) return Status::Ok();
  Status s = CommitBatch(batch);
  if (!s.ok()) return Status(s.code(), "committing " + RedoPath() + ": " + s.message());
  spdlog::info("sqlite store {}: committed {} records ({} changes) from its redo log, up to {}",
               path_, batch.size(), changes, redo_seq_);
  return Status::Ok();
}

}  // namespace bulkhead
