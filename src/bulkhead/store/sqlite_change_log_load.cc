// SqliteChangeLog: reading the store into MemoryState at open. Damaged job rows are refused, or
// moved aside with salvage_damaged_jobs; then the writer thread starts.
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulkhead/store/job_row_check.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/sqlite_db.h"

namespace bulkhead {
namespace {

// How many damaged rows a refusal names (it counts them all).
constexpr size_t kBadRowsNamed = 5;

// `s` quoted for a message, control and non-ASCII bytes escaped, cut after 40 bytes.
std::string Printable(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  if (s.size() > 40) out += "...";
  return out + "\"";
}

// LoadJobs' scan: every row, the payload and jobtype only of the rows loaded whole (?1: all).
constexpr const char* kScanJobs =
    "SELECT id, jid, state, queue, score, enqueued, reserve_for,"
    " CASE WHEN state<>0 OR ?1 THEN jobtype END, CASE WHEN state<>0 OR ?1 THEN payload END"
    " FROM jobs";

bool KnownState(int state) {
  return state >= static_cast<int>(JobState::kQueued) &&
         state <= static_cast<int>(JobState::kWorking);
}

}  // namespace

void SqliteChangeLog::ReadJobColumns(sqlite3_stmt* st, JobRecord& job) {
  job.jid = ColumnText(st, 1);
  job.queue = ColumnText(st, 3);
  job.score = sqlite3_column_int64(st, 4);
  job.enqueued_us = sqlite3_column_int64(st, 5);
  job.reserve_for_s = sqlite3_column_int(st, 6);
  job.jobtype = ColumnText(st, 7);
  job.payload = ColumnText(st, 8);
}

Status SqliteChangeLog::Load(MemoryState& state) {
  Status s = OpenDatabase();
  if (s.ok()) s = LoadJobs(state);
  size_t keys = 0;
  size_t hosts = 0;
  if (s.ok()) s = LoadOtherTables(state, keys, hosts);
  if (!s.ok()) {
    Abandon();
    return s;
  }
  state.FinishLoad();
  first_run_id_ = state.next_id();
  spdlog::info("sqlite store {}: loaded {} signing keys, {} failing hosts", path_, keys, hosts);
  struct stat file_stat;
  if (keys > 0 && ::stat(path_.c_str(), &file_stat) == 0 && (file_stat.st_mode & 077) != 0) {
    spdlog::warn(
        "sqlite store {} holds private signing keys but is readable by others (mode {:o});"
        " chmod 600 it",
        path_, file_stat.st_mode & 0777);
  }
  return StartRunning();
}

Status SqliteChangeLog::LoadOtherTables(MemoryState& state, size_t& keys, size_t& hosts) {
  Status s = SqliteForEachRow(
      db_, path_, "SELECT name, value FROM counters",
      [&](sqlite3_stmt* st) { state.LoadCounter(ColumnText(st, 0), sqlite3_column_int64(st, 1)); });
  if (s.ok()) {
    s = SqliteForEachRow(db_, path_, "SELECT queue FROM paused",
                         [&](sqlite3_stmt* st) { state.LoadPaused(ColumnText(st, 0)); });
  }
  if (s.ok()) {
    s = SqliteForEachRow(db_, path_, "SELECT key_id, pem FROM signing_keys", [&](sqlite3_stmt* st) {
      state.LoadSigningKey(ColumnText(st, 0), ColumnText(st, 1));
      ++keys;
    });
  }
  if (s.ok()) {
    s = SqliteForEachRow(
        db_, path_,
        "SELECT host, breaker_open_until, breaker_series_openings, breaker_openings,"
        " failing_since, unavailable, retry_after_until FROM host_states",
        [&](sqlite3_stmt* st) {
          HostStateRecord r;
          r.host = ColumnText(st, 0);
          r.breaker_open_until_us = sqlite3_column_int64(st, 1);
          r.breaker_series_openings = sqlite3_column_int(st, 2);
          r.breaker_openings = sqlite3_column_int64(st, 3);
          r.failing_since_us = sqlite3_column_int64(st, 4);
          r.unavailable = sqlite3_column_int(st, 5) != 0;
          r.retry_after_until_us = sqlite3_column_int64(st, 6);
          state.LoadHostState(std::move(r));
          ++hosts;
        });
  }
  if (s.ok()) {
    s = SqliteForEachRow(
        db_, path_, "SELECT key, jid, until_us FROM unique_locks", [&](sqlite3_stmt* st) {
          state.LoadUniqueLock(ColumnText(st, 0), ColumnText(st, 1), sqlite3_column_int64(st, 2));
        });
  }
  if (s.ok()) {
    s = SqliteForEachRow(db_, path_, "SELECT entry, due_us FROM cron_firings",
                         [&](sqlite3_stmt* st) {
                           state.LoadCronFiring(ColumnText(st, 0), sqlite3_column_int64(st, 1));
                         });
  }
  Status bad_record;
  if (s.ok()) {
    s = SqliteForEachRow(
        db_, path_, "SELECT space, key, value FROM records", [&](sqlite3_stmt* st) {
          Status loaded = state.LoadRecord(ColumnText(st, 0), ColumnText(st, 1), ColumnText(st, 2));
          if (bad_record.ok() && !loaded.ok()) bad_record = loaded;
        });
  }
  if (s.ok() && !bad_record.ok()) {
    s = Status::FailedPrecondition("sqlite store " + path_ + ": " + bad_record.message());
  }
  return s;
}

void SqliteChangeLog::DamagedRows::Add(int64_t id, std::string_view jid, std::string problem) {
  if (rows.size() < kBadRowsNamed) {
    named += (named.empty() ? "" : ", ") + std::string("id ") + std::to_string(id) + " (jid " +
             Printable(jid) + "): " + problem;
  }
  rows.emplace_back(id, std::move(problem));
}

std::string SqliteChangeLog::DamagedRows::Named() const {
  return named + (rows.size() > kBadRowsNamed ? ", ..." : "");
}

Status SqliteChangeLog::LoadJobs(MemoryState& state) {
  DamagedRows bad;
  JobsLoaded loaded;
  Status s = ScanJobs(state, bad, loaded);
  if (s.ok() && loaded.checked_queued < loaded.queued) s = CheckQueuedSample(bad, loaded);
  if (!s.ok()) return s;
  if (!bad.rows.empty() && !salvage_) {
    return Damaged(
        "holds " + std::to_string(bad.rows.size()) +
            " damaged jobs (a payload that is not a JSON object carrying the row's jid, or an "
            "unknown state), which bulkhead never hands to a worker: " +
            bad.Named(),
        "Restore the store from a backup; or keep the other jobs: start once with "
        "`bulkhead serve --salvage-damaged-jobs`, which moves the damaged rows to the "
        "table damaged_jobs of " +
            path_ + " (kept for inspection, never served)");
  }
  if (!bad.rows.empty()) {
    s = MoveDamagedJobs(bad.rows, bad.Named());
    if (!s.ok()) return s;
  }
  spdlog::info(
      "sqlite store {}: loaded {} jobs; checked {} of {} payloads at start (every job not queued, "
      "{} of the {} queued: the others are checked when first read)",
      path_, loaded.jobs, loaded.checked, loaded.rows, loaded.checked_queued, loaded.queued);
  return Status::Ok();
}

Status SqliteChangeLog::ScanJobs(MemoryState& state, DamagedRows& bad, JobsLoaded& loaded) {
  sqlite3_stmt* st = nullptr;
  Status s = SqlitePrepare(db_, kScanJobs, &st);
  if (!s.ok()) return s;
  // Without compaction (a bare MemoryState) every row loads whole.
  const bool whole = salvage_ || !state.compacts();
  sqlite3_bind_int(st, 1, whole ? 1 : 0);
  // The scan reads the file through mmap (a fifth less time at 10 M rows), and only the scan: a
  // disk that fails under it raises SIGBUS instead of an I/O error
  // (https://www.sqlite.org/mmap.html), which stops the process before it serves or writes
  // anything.
  SqliteExec(db_, path_, "PRAGMA mmap_size=4294967296");
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    int job_state = sqlite3_column_int(st, 2);
    bool queued = job_state == static_cast<int>(JobState::kQueued);
    ++loaded.rows;
    loaded.queued += queued ? 1 : 0;
    Status ls;
    if (!KnownState(job_state)) {
      bad.Add(id, ColumnView(st, 1), "unknown state " + std::to_string(job_state));
      continue;
    }
    if (queued && !whole) {
      // Cold: only what the queue keeps (queue_slot.h); the payload stays in the file.
      ls = state.LoadColdJob(id, ColumnView(st, 1), ColumnView(st, 3), sqlite3_column_int64(st, 4),
                             sqlite3_column_int64(st, 5), sqlite3_column_int(st, 6));
    } else {
      JobRecord job;
      ReadJobColumns(st, job);
      std::string problem = JobRowProblem(job_state, job);
      ++loaded.checked;
      loaded.checked_queued += queued ? 1 : 0;
      if (!problem.empty()) {
        bad.Add(id, job.jid, std::move(problem));
        continue;
      }
      job.state = static_cast<JobState>(job_state);
      ls = state.LoadJob(id, std::move(job));
    }
    if (!ls.ok()) spdlog::warn("sqlite {}: skipping row {}: {}", path_, id, ls.message());
    ++loaded.jobs;
  }
  sqlite3_finalize(st);
  SqliteExec(db_, path_, "PRAGMA mmap_size=0");
  if (rc != SQLITE_DONE) {
    return Damaged(
        "is damaged: reading its jobs failed (SQLite: " + std::string(sqlite3_errmsg(db_)) + ")",
        RestoreOrRecoverTodo());
  }
  return Status::Ok();
}

Status SqliteChangeLog::CheckQueuedSample(DamagedRows& bad, JobsLoaded& loaded) {
  sqlite3_stmt* st = nullptr;
  Status s = SqlitePrepare(
      db_, "SELECT id, jid, payload FROM jobs WHERE state=0 ORDER BY id LIMIT ?1", &st);
  if (!s.ok()) return s;
  sqlite3_bind_int64(st, 1, static_cast<int64_t>(start_sample_));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    JobRecord job;
    job.jid = ColumnText(st, 1);
    job.payload = ColumnText(st, 2);
    std::string problem = JobRowProblem(static_cast<int>(JobState::kQueued), job);
    if (!problem.empty()) bad.Add(sqlite3_column_int64(st, 0), job.jid, std::move(problem));
    ++loaded.checked;
    ++loaded.checked_queued;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    return Damaged(
        "is damaged: reading its jobs failed (SQLite: " + std::string(sqlite3_errmsg(db_)) + ")",
        RestoreOrRecoverTodo());
  }
  return Status::Ok();
}

bool SqliteChangeLog::SetAsideIfDamaged(int64_t id, int state, const JobRecord& job,
                                        bool check_payload) {
  std::string problem = !KnownState(state) ? "unknown state " + std::to_string(state)
                        : check_payload    ? JobRowProblem(state, job)
                                           : "";
  if (problem.empty()) return false;
  DamagedRows bad;
  bad.Add(id, job.jid, std::move(problem));
  // The move is a transaction of its own: the open one (logged changes only) is committed first.
  Status s = failed_.load(std::memory_order_acquire) ? failure() : CommitOpen();
  FailIfNot(s);
  if (s.ok()) s = MoveDamagedJobs(bad.rows, bad.Named());
  if (!s.ok()) {
    spdlog::error("sqlite store {}: damaged job row {} is never handed out, but stays in jobs: {}",
                  path_, bad.Named(), s.message());
  }
  return true;
}

Status SqliteChangeLog::MoveDamagedJobs(const std::vector<std::pair<int64_t, std::string>>& bad,
                                        const std::string& first_bad) {
  Status s = SqliteExec(
      db_, path_,
      "CREATE TABLE IF NOT EXISTS damaged_jobs(id INTEGER PRIMARY KEY, jid, state, queue, "
      "jobtype, score, enqueued, reserve_for, payload, reason TEXT NOT NULL)");
  sqlite3_stmt* move = nullptr;
  const std::string what = "sqlite " + path_;
  if (s.ok()) s = SqliteExec(db_, path_, "BEGIN");
  if (s.ok()) {
    s = SqlitePrepare(
        db_,
        "INSERT OR REPLACE INTO damaged_jobs SELECT id, jid, state, queue, jobtype, score,"
        " enqueued, reserve_for, payload, ?2 FROM jobs WHERE id=?1; ",
        &move);
  }
  for (size_t i = 0; s.ok() && i < bad.size(); ++i) {
    sqlite3_bind_int64(move, 1, bad[i].first);
    sqlite3_bind_text(move, 2, bad[i].second.data(), (int)bad[i].second.size(), SQLITE_STATIC);
    s = SqliteStepDone(db_, move, what.c_str());
    if (s.ok()) {
      sqlite3_bind_int64(stmts_.delete_job, 1, bad[i].first);
      s = SqliteStepDone(db_, stmts_.delete_job, what.c_str());
    }
  }
  if (move) sqlite3_finalize(move);
  if (s.ok()) s = SqliteExec(db_, path_, "COMMIT");
  if (!s.ok()) {
    SqliteExec(db_, path_,
               "ROLLBACK");  // its own error adds nothing: Load fails and closes the file
    return Status(s.code(), "moving damaged jobs to damaged_jobs: " + s.message());
  }
  spdlog::warn("sqlite store {}: moved {} damaged jobs to the table damaged_jobs ({}{})", path_,
               bad.size(), first_bad, bad.size() > kBadRowsNamed ? ", ..." : "");
  return Status::Ok();
}

}  // namespace bulkhead
