#include "bulkhead/store/sqlite_change_log.h"

#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "bulkhead/store/sqlite_db.h"

namespace bulkhead {

SqliteChangeLog::SqliteChangeLog(std::string path, Store::Poster poster, std::string durability,
                                 int64_t max_page_count, bool salvage_damaged_jobs)
    : path_(std::move(path)),
      poster_(std::move(poster)),
      durability_(std::move(durability)),
      loop_logs_(durability_ != "power"),
      max_page_count_(max_page_count),
      salvage_(salvage_damaged_jobs) {}

SqliteChangeLog::~SqliteChangeLog() { Close(); }

Status SqliteChangeLog::StartRunning() {
  // Fold what an earlier run left in the WAL (after kill -9 or a failed commit) into the database
  // now, so that the WAL starts empty. A failure (a disk still full) is not fatal here: the first
  // commit that cannot be written puts the store in degraded mode.
  if (sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr) !=
      SQLITE_OK) {
    spdlog::warn("sqlite store {}: checkpoint at open failed: {}", path_, sqlite3_errmsg(db_));
  }
  // Running from now on: a stop that does not reach Close is unclean. Written after the
  // checkpoint, so that this write (not a commit on the event loop) restarts the WAL.
  Status s = SqliteExec(db_, path_,
                        ("INSERT OR REPLACE INTO meta(key, value) VALUES('clean_shutdown', '0'),"
                         " ('commit_seq', '" +
                         std::to_string(commit_seq_) + "')")
                            .c_str());
  if (!s.ok()) {
    Abandon();
    return s;
  }
  commits_fd_ = ::open(CommitsPath().c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (commits_fd_ < 0) {
    Status err = Status::Unavailable("cannot open " + CommitsPath() + ": " + std::strerror(errno));
    Abandon();
    return err;
  }
  RecordCommit();
  // Every record of the redo log is in the database now (ReplayRedo): it starts empty.
  if (loop_logs_) {
    auto redo = RedoLog::Open(RedoPath(), kRedoRegionBytes, kRedoSwitchBytes);
    if (!redo.ok()) {
      Abandon();
      return redo.status();
    }
    redo_ = std::move(*redo);
  } else {
    RemoveRedoFile();
  }
  if (max_page_count_ > 0) {
    s = SqliteExec(db_, path_,
                   ("PRAGMA max_page_count=" + std::to_string(max_page_count_)).c_str());
    if (!s.ok()) return s;
  }
  // Replaces the automatic checkpoint PRAGMA wal_autocheckpoint set (sqlite3_wal_hook: "overrides
  // any prior sqlite3_wal_autocheckpoint() setting"): the writer checkpoints instead (Checkpoint).
  sqlite3_wal_hook(db_, &SqliteChangeLog::OnWalCommit, this);
  loaded_ = true;
  writer_ = std::thread([this] { WriterLoop(); });
  pthread_setname_np(writer_.native_handle(), "bulkhead-sqlite");
  return Status::Ok();
}

void SqliteChangeLog::RemoveRedoFile() {
  if (::unlink(RedoPath().c_str()) != 0 && errno != ENOENT) {
    spdlog::warn("sqlite store {}: cannot remove {}: {}", path_, RedoPath(), std::strerror(errno));
  }
}

int SqliteChangeLog::OnWalCommit(void* self, sqlite3*, const char*, int pages) {
  static_cast<SqliteChangeLog*>(self)->wal_pages_ = pages;
  return SQLITE_OK;
}

void SqliteChangeLog::Append(std::vector<Change> changes, std::function<void(Status)> durable) {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_changes_ += changes.size();
    pending_.push_back(Pending{std::move(changes), std::move(durable)});
    next = ScheduleLocked();
  }
  Run(next);
}

void SqliteChangeLog::ReadJobs(std::vector<int64_t> ids, ReadDone done) {
  QueueRead(std::move(ids), std::move(done), /*ahead=*/false);
}

void SqliteChangeLog::ReadAhead(std::vector<int64_t> ids, ReadDone done) {
  QueueRead(std::move(ids), std::move(done), /*ahead=*/true);
}

void SqliteChangeLog::QueueRead(std::vector<int64_t> ids, ReadDone done, bool ahead) {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Pending p;
    p.read = true;
    p.ahead = ahead;
    p.ids = std::move(ids);
    p.read_done = std::move(done);
    pending_.push_back(std::move(p));
    next = ScheduleLocked();
  }
  Run(next);
}

SqliteChangeLog::Next SqliteChangeLog::ScheduleLocked() {
  // Changes the loop can log: its end-of-turn flush logs them and wakes the writer after.
  if (logged_ < pending_.size() && LoopMayLogLocked()) {
    if (flush_posted_) return Next::kNothing;
    flush_posted_ = true;
    return Next::kPostFlush;
  }
  if (pending_.empty() && new_tasks_.empty() && !stopping_) {
    return Next::kNothing;
  }
  if (owner_ == Owner::kNobody) {
    owner_ = Owner::kWriter;
    return Next::kWakeWriter;
  }
  // A busy writer looks at the queue again before it sleeps; a gathering one is woken early.
  return gathering_ && UrgentLocked() ? Next::kWakeWriter : Next::kNothing;
}

void SqliteChangeLog::Run(Next next) {
  if (next == Next::kWakeWriter) {
    cv_.notify_one();
  } else if (next == Next::kPostFlush) {
    // Posted from the loop itself, it runs after what this turn already has queued.
    poster_([this, life = std::weak_ptr<int>(life_)] {
      if (life.lock()) FlushOnLoop();
    });
  }
}

Status SqliteChangeLog::ReadRange(int64_t first, int64_t last,
                                  std::vector<std::optional<JobRecord>>& rows,
                                  std::vector<int>& states, size_t at) {
  sqlite3_stmt* st = stmts_.read_jobs;
  sqlite3_reset(st);
  sqlite3_bind_int64(st, 1, first);
  sqlite3_bind_int64(st, 2, last);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    JobRecord job;
    ReadJobColumns(st, job);
    int state = sqlite3_column_int(st, 2);
    job.state = static_cast<JobState>(state);
    size_t k = at + static_cast<size_t>(id - first);
    rows[k] = std::move(job);
    states[k] = state;
  }
  Status s = Status::Ok();
  if (rc != SQLITE_DONE) {
    s = Status::Unavailable("sqlite " + path_ + ": reading job rows " + std::to_string(first) +
                            ".." + std::to_string(last) + ": " + sqlite3_errmsg(db_));
  }
  sqlite3_reset(st);
  return s;
}

Result<std::vector<std::optional<JobRecord>>> SqliteChangeLog::ReadRows(
    const std::vector<int64_t>& ids) {
  std::vector<std::optional<JobRecord>> rows(ids.size());
  std::vector<int> states(ids.size(), 0);
  // A run of consecutive ids (rows read ahead mostly are) is one range read: one B-tree descent.
  for (size_t i = 0; i < ids.size();) {
    size_t j = i + 1;
    while (j < ids.size() && ids[j] == ids[j - 1] + 1) ++j;
    Status s = ReadRange(ids[i], ids[j - 1], rows, states, i);
    if (!s.ok()) return s;
    i = j;
  }
  // Checked once no statement runs: setting a damaged row aside commits.
  for (size_t k = 0; k < ids.size(); ++k) {
    if (!rows[k]) continue;
    int64_t id = ids[k];
    // Its state and score as the open transaction's kept update sets them.
    if (write_behind_.Overlay(id, *rows[k])) states[k] = static_cast<int>(rows[k]->state);
    // A queued payload is checked here, not at start, unless this run wrote the row (see the
    // damage notes in the header).
    if (SetAsideIfDamaged(id, states[k], *rows[k], /*check_payload=*/id < first_run_id_)) {
      rows[k].reset();
    }
  }
  return rows;
}

void SqliteChangeLog::TakeBatchLocked(std::vector<Pending>& batch) {
  // What the loop has not seen yet is left to its posted flush (which logs it), unless it will
  // not log it (none posted, a full redo log, stopping: the writer commits those) or a new
  // writer task is to run after everything appended before it is committed (a backup's copy
  // holds every change answered before it started).
  bool loop_logs_rest = flush_posted_ && LoopMayLogLocked() && new_tasks_.empty();
  if (!loop_logs_rest || logged_ == pending_.size()) {
    batch.swap(pending_);
  } else {
    auto seen = pending_.begin() + static_cast<std::ptrdiff_t>(logged_);
    batch.assign(std::make_move_iterator(pending_.begin()), std::make_move_iterator(seen));
    pending_.erase(pending_.begin(), seen);
  }
  pending_changes_ = 0;
  for (const Pending& p : pending_) pending_changes_ += p.changes.size();
  logged_ = settled_ = 0;
  pending_owes_ = pending_reads_ = pending_unlogged_ = pending_logged_ = false;
  // The answers this batch owes (one closure carries them) count from now: the loop answers
  // nothing that would overtake them (LogLocked).
  if (std::any_of(batch.begin(), batch.end(), OwesInOrder)) {
    answers_in_flight_->fetch_add(1, std::memory_order_relaxed);
  }
  for (auto& t : new_tasks_) tasks_.push_back(std::move(t));
  new_tasks_.clear();
}

void SqliteChangeLog::WriterLoop() {
  std::vector<Pending> batch;
  for (;;) {
    bool commit_now;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return owner_ == Owner::kWriter; });
      if (pending_.empty() && stopping_ && !txn_open_) break;
      GatherLocked(lock);
      TakeBatchLocked(batch);
      // Tasks run between transactions; a full redo log has room again once committed.
      commit_now = stopping_ || !tasks_.empty() || redo_full_ || !redo_;
    }
    WriteAndAnswer(batch, commit_now);
    if (!txn_open_) {
      FreeCommittedRedo();
      RunWriterTasks(/*stopping=*/false);
      if (wal_pages_ >= kWalAutocheckpointPages) Checkpoint();
    }
    Next next = Next::kNothing;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // An open transaction and writer tasks keep the connection (GatherLocked waits for the
      // transaction's deadline; each task step runs between commits).
      if (!txn_open_ && tasks_.empty() && !stopping_) {
        owner_ = Owner::kNobody;
        next = ScheduleLocked();
      }
    }
    if (next == Next::kPostFlush) Run(next);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& t : new_tasks_) tasks_.push_back(std::move(t));
    new_tasks_.clear();
  }
  RunWriterTasks(/*stopping=*/true);
}

void SqliteChangeLog::RunOnWriter(SqliteWriterTask task) {
  Next next = Next::kNothing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      new_tasks_.push_back(std::move(task));
      task = nullptr;
      next = ScheduleLocked();
    }
  }
  if (task) {
    task(nullptr, /*stopping=*/true);  // closed already: the task only cleans up
    return;
  }
  Run(next);
}

void SqliteChangeLog::RunWriterTasks(bool stopping) {
  // A task runs between commits, so a step never shares a transaction with a batch; each step is
  // short, so a commit waits at most one step of each task.
  std::erase_if(tasks_, [&](SqliteWriterTask& task) { return task(db_, stopping) || stopping; });
}

void SqliteChangeLog::FailLocked(const Status& s, const char* what) {
  if (failed_.load(std::memory_order_relaxed)) return;
  spdlog::error(
      "sqlite {} {} failed: {}; the store is degraded: every change is refused until bulkhead "
      "restarts",
      what, path_, s.message());
  failure_ = Status::Unavailable(std::string("the last ") + what + " " + path_ +
                                 " failed: " + s.message());
  failed_.store(true, std::memory_order_release);
}

void SqliteChangeLog::Checkpoint() {
  int log = 0;
  int done = 0;
  if (sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done) !=
      SQLITE_OK) {
    // Only the WAL's size is at stake: the next commit past the bound tries again.
    spdlog::warn("sqlite store {}: checkpoint failed: {}", path_, sqlite3_errmsg(db_));
    return;
  }
  wal_pages_ = log - done;
  if (log == 0 || log != done || failed_.load(std::memory_order_acquire)) return;
  // Every frame is in the database: the next commit starts the WAL over (and truncates it to
  // kWalSizeLimitBytes), syncing its new header. An empty commit does it here, off the loop.
  std::vector<Pending> none;
  FailIfNot(CommitBatch(none));
}

Status SqliteChangeLog::StepTransaction(sqlite3_stmt* st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return Status::Ok();
  return Status::Unavailable("sqlite " + path_ + ": " + sqlite3_errmsg(db_));
}

Status SqliteChangeLog::failure() const {
  if (!failed_.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

void SqliteChangeLog::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    // Close runs on the loop, so the loop holds no commit now: the writer commits what is queued.
    owner_ = Owner::kWriter;
  }
  cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  // Tasks handed over while the writer never ran (a store that did not open) only clean up.
  for (auto& task : new_tasks_) task(nullptr, /*stopping=*/true);
  new_tasks_.clear();
  stmts_.Finalize();
  // Everything appended is committed: the next open can skip the integrity check. Not after a
  // failed commit (the file may have been hurt by whatever made it fail).
  if (db_ && loaded_ && !failed_.load(std::memory_order_acquire)) {
    Status s = SqliteExec(db_, path_, "UPDATE meta SET value='1' WHERE key='clean_shutdown'");
    if (!s.ok())
      spdlog::warn("sqlite store {}: cannot mark the stop clean: {}", path_, s.message());
  }
  if (db_) sqlite3_close(db_);
  db_ = nullptr;
  // Every record is committed (the writer committed what was queued) unless a commit failed:
  // then the records stay, for the next open to commit. Otherwise the file goes (the next open
  // makes a new one), so that a release that reads only an earlier format of it finds none.
  bool committed = redo_ && !failed_.load(std::memory_order_acquire);
  redo_.reset();
  if (committed) RemoveRedoFile();
  if (commits_fd_ >= 0) ::close(commits_fd_);
  commits_fd_ = -1;
}

}  // namespace bulkhead
