// SqliteChangeLog's transactions on the writer thread: the open transaction a batch is written
// into, its commit, and the answers a batch owes (see "Who commits" in sqlite_change_log.h).
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/sqlite_change_writer.h"

namespace bulkhead {

void SqliteChangeLog::FailIfNot(const Status& s) {
  if (s.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  FailLocked(s, "commit to");  // only the first failure counts
}

void SqliteChangeLog::WriteAndAnswer(std::vector<Pending>& batch, bool commit_now) {
  // Changes the loop did not log are durable only once committed; so are the answers after them.
  bool unlogged = std::any_of(batch.begin(), batch.end(),
                              [](const Pending& p) { return !p.read && p.redo_seq == 0; });
  bool writes = std::any_of(batch.begin(), batch.end(), [](const Pending& p) { return !p.read; });
  // After a failed commit nothing more is written: a later batch may depend on the lost one (an
  // update of a row whose insert failed), and the file must keep a prefix of the history.
  Status s = failed_.load(std::memory_order_acquire) ? failure() : Status::Ok();
  if (s.ok() && writes) s = WriteOpen(batch);
  bool due = txn_open_ && (std::chrono::steady_clock::now() >= txn_deadline_ ||
                           txn_changes_ >= kRedoGatherMaxChanges);
  if (s.ok() && (commit_now || unlogged || due)) s = CommitOpen();
  FailIfNot(s);
  // Counted in answers_in_flight_ when the writer took the batch (TakeBatchLocked).
  bool counted = std::any_of(batch.begin(), batch.end(), OwesInOrder);
  // Reads see every change queued before them: written to the open transaction, or committed.
  auto answers = std::make_shared<std::vector<std::function<void()>>>();
  for (Pending& p : batch) {
    if (p.read) {
      auto rows = std::make_shared<Result<std::vector<std::optional<JobRecord>>>>(ReadRows(p.ids));
      answers->push_back([rows, done = std::move(p.read_done)] { done(std::move(*rows)); });
    } else if (p.durable) {
      // A logged change is durable whatever became of the transaction (the next open commits it).
      Status answer = p.redo_seq > 0 ? Status::Ok() : s;
      answers->push_back([answer, cb = std::move(p.durable)] { cb(answer); });
    }
  }
  batch.clear();
  if (answers->empty()) return;
  poster_(
      [this, life = std::weak_ptr<int>(life_), answers, counted, in_flight = answers_in_flight_] {
        for (auto& answer : *answers) answer();
        if (counted) in_flight->fetch_sub(1, std::memory_order_relaxed);
        if (life.lock()) AnswerHeldOnLoop();
      });
}

Status SqliteChangeLog::WriteOpen(std::vector<Pending>& batch) {
  if (!txn_open_) {
    Status s = StepTransaction(stmts_.begin);
    if (!s.ok()) return s;
    txn_open_ = true;  // due at txn_deadline_ (GatherLocked)
    txn_changes_ = 0;
    txn_redo_seq_ = 0;
  }
  SqliteChangeWriter writer(db_, path_, stmts_);
  // Rows deleted in this batch need none of their earlier updates written, and rows both inserted
  // and deleted in it need no write at all (row ids are never reused, so an update or insert of a
  // deleted id always comes before its delete).
  std::unordered_set<int64_t> deleted, inserted;
  for (const auto& p : batch) {
    txn_redo_seq_ = std::max(txn_redo_seq_, p.redo_seq);
    txn_changes_ += p.changes.size();
    for (const auto& c : p.changes) {
      if (c.kind == Change::Kind::kDeleteJob) deleted.insert(c.id);
      if (c.kind == Change::Kind::kDeleteAll) deleted.clear();
    }
  }
  // Row deletes wait for the next other write (or the batch's end) and go together, by runs of
  // ids: deletes of different rows commute, and no change of a row follows its delete.
  std::vector<int64_t> deletes;
  Status s;
  for (auto& p : batch) {
    for (auto& c : p.changes) {
      if (deleted.contains(c.id)) {
        if (c.kind == Change::Kind::kInsertJob) {
          inserted.insert(c.id);
          continue;
        }
        if (c.kind == Change::Kind::kUpdateJob || c.kind == Change::Kind::kUpdateState) continue;
        if (c.kind == Change::Kind::kDeleteJob && inserted.contains(c.id)) continue;
      }
      // Kept until the commit (moved from; the batch's changes are not read again), or written.
      if (write_behind_.Take(c)) continue;
      if (c.kind == Change::Kind::kDeleteJob) {
        deletes.push_back(c.id);
        continue;
      }
      s = writer.DeleteJobs(deletes);
      if (s.ok()) s = writer.Write(c);
      if (!s.ok()) break;
    }
    if (!s.ok()) break;
  }
  if (s.ok()) s = writer.DeleteJobs(deletes);
  if (!s.ok()) {
    // The batch's error is the one to report; after it nothing more is written (degraded mode).
    StepTransaction(stmts_.rollback);
    write_behind_.Clear();
    txn_open_ = false;
  }
  return s;
}

Status SqliteChangeLog::CommitOpen() {
  if (!txn_open_) return Status::Ok();
  txn_open_ = false;
  SqliteChangeWriter writer(db_, path_, stmts_);
  Status s = write_behind_.Write(writer);
  if (s.ok()) s = writer.WriteCommitSeq(commit_seq_ + 1);
  if (s.ok() && txn_redo_seq_ > 0) s = writer.WriteRedoSeq(txn_redo_seq_);
  if (!s.ok()) {
    StepTransaction(stmts_.rollback);
    return s;
  }
  s = StepTransaction(stmts_.commit);
  if (!s.ok()) {
    // A COMMIT that fails (SQLITE_FULL, an I/O error) may leave the transaction open.
    if (!sqlite3_get_autocommit(db_)) StepTransaction(stmts_.rollback);
    return s;
  }
  // After the commit, before anyone hears of it: the side file never runs ahead of the database
  // (opened once loaded: a replay at open is recorded when the store starts running).
  ++commit_seq_;
  RecordCommit();
  redo_committed_ = std::max(redo_committed_, txn_redo_seq_);
  return Status::Ok();
}

void SqliteChangeLog::RecordCommit() {
  if (commits_fd_ < 0) return;
  // Fixed width, so that it overwrites the previous number.
  char buf[24];
  int n = std::snprintf(buf, sizeof(buf), "%020lld\n", static_cast<long long>(commit_seq_));
  if (::pwrite(commits_fd_, buf, n, 0) != n) {
    // Only a smaller number than the database's is left behind: the check stays silent.
    spdlog::warn("cannot record commit {} in its side file: {}", commit_seq_, std::strerror(errno));
  }
}

Status SqliteChangeLog::CommitBatch(std::vector<Pending>& batch) {
  Status s = WriteOpen(batch);
  if (s.ok()) s = CommitOpen();
  return s;
}

}  // namespace bulkhead
