#include "bulkhead/store/sqlite_change_writer.h"

#include <sqlite3.h>

#include <algorithm>

#include "bulkhead/store/sqlite_db.h"

namespace bulkhead {
namespace {

// Binds `s` to parameter `i`; `s` must stay unchanged until the statement is reset.
void BindText(sqlite3_stmt* st, int i, const std::string& s) {
  sqlite3_bind_text(st, i, s.data(), (int)s.size(), SQLITE_STATIC);
}

// Each Bind* binds the parameters of the statement for its change kind and returns it.

sqlite3_stmt* BindInsertJob(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.insert_job;
  sqlite3_bind_int64(st, 1, c.id);
  BindText(st, 2, c.job.jid);
  sqlite3_bind_int(st, 3, static_cast<int>(c.job.state));
  BindText(st, 4, c.job.queue);
  BindText(st, 5, c.job.jobtype);
  sqlite3_bind_int64(st, 6, c.job.score);
  sqlite3_bind_int64(st, 7, c.job.enqueued_us);
  sqlite3_bind_int(st, 8, c.job.reserve_for_s);
  BindText(st, 9, c.job.payload);
  return st;
}

sqlite3_stmt* BindUpdateJob(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.update_job;
  sqlite3_bind_int64(st, 1, c.id);
  sqlite3_bind_int(st, 2, static_cast<int>(c.job.state));
  BindText(st, 3, c.job.queue);
  sqlite3_bind_int64(st, 4, c.job.score);
  sqlite3_bind_int64(st, 5, c.job.enqueued_us);
  BindText(st, 6, c.job.payload);
  return st;
}

sqlite3_stmt* BindUpdateState(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.update_state;
  sqlite3_bind_int64(st, 1, c.id);
  sqlite3_bind_int(st, 2, static_cast<int>(c.job.state));
  sqlite3_bind_int64(st, 3, c.job.score);
  return st;
}

sqlite3_stmt* BindDeleteJob(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.delete_job;
  sqlite3_bind_int64(st, 1, c.id);
  return st;
}

sqlite3_stmt* BindSetPaused(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = c.flag ? stmts.pause : stmts.unpause;
  BindText(st, 1, c.name);
  return st;
}

sqlite3_stmt* BindPutSigningKey(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.put_key;
  BindText(st, 1, c.name);
  BindText(st, 2, c.value);
  return st;
}

sqlite3_stmt* BindDeleteSigningKey(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.delete_key;
  BindText(st, 1, c.name);
  return st;
}

sqlite3_stmt* BindPutHostState(const SqliteStatements& stmts, const Change& c) {
  const HostStateRecord& r = c.host_state;
  sqlite3_stmt* st = stmts.put_host;
  BindText(st, 1, r.host);
  sqlite3_bind_int64(st, 2, r.breaker_open_until_us);
  sqlite3_bind_int(st, 3, r.breaker_series_openings);
  sqlite3_bind_int64(st, 4, r.breaker_openings);
  sqlite3_bind_int64(st, 5, r.failing_since_us);
  sqlite3_bind_int(st, 6, r.unavailable ? 1 : 0);
  sqlite3_bind_int64(st, 7, r.retry_after_until_us);
  return st;
}

sqlite3_stmt* BindDeleteHostState(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.delete_host;
  BindText(st, 1, c.name);
  return st;
}

sqlite3_stmt* BindRecord(const SqliteStatements& stmts, const Change& c) {
  bool put = c.kind == Change::Kind::kPutRecord;
  sqlite3_stmt* st = put ? stmts.put_record : stmts.delete_record;
  BindText(st, 1, c.name);
  BindText(st, 2, c.key);
  if (put) BindText(st, 3, c.value);
  return st;
}

sqlite3_stmt* BindPutUniqueLock(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.put_unique_lock;
  BindText(st, 1, c.name);
  BindText(st, 2, c.value);
  sqlite3_bind_int64(st, 3, c.delta);
  return st;
}

sqlite3_stmt* BindDeleteUniqueLock(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.delete_unique_lock;
  BindText(st, 1, c.name);
  return st;
}

sqlite3_stmt* BindSetCronFiring(const SqliteStatements& stmts, const Change& c) {
  sqlite3_stmt* st = stmts.set_cron_firing;
  BindText(st, 1, c.name);
  sqlite3_bind_int64(st, 2, c.delta);
  return st;
}

}  // namespace

Status SqliteChangeWriter::Write(const Change& c) {
  sqlite3_stmt* st = nullptr;
  switch (c.kind) {
    case Change::Kind::kInsertJob:
      st = BindInsertJob(stmts_, c);
      break;
    case Change::Kind::kUpdateJob:
      st = BindUpdateJob(stmts_, c);
      break;
    case Change::Kind::kUpdateState:
      st = BindUpdateState(stmts_, c);
      break;
    case Change::Kind::kDeleteJob:
      st = BindDeleteJob(stmts_, c);
      break;
    case Change::Kind::kAddCounter:
      return AddCounter(c.name, c.delta);
    case Change::Kind::kSetPaused:
      st = BindSetPaused(stmts_, c);
      break;
    case Change::Kind::kDeleteAll:
      // FLUSH keeps signing_keys, host_states and cron_firings.
      return SqliteExec(db_, path_,
                        "DELETE FROM jobs; DELETE FROM counters; DELETE FROM paused;"
                        " DELETE FROM unique_locks; DELETE FROM records;");
    case Change::Kind::kPutSigningKey:
      st = BindPutSigningKey(stmts_, c);
      break;
    case Change::Kind::kDeleteSigningKey:
      st = BindDeleteSigningKey(stmts_, c);
      break;
    case Change::Kind::kPutHostState:
      st = BindPutHostState(stmts_, c);
      break;
    case Change::Kind::kDeleteHostState:
      st = BindDeleteHostState(stmts_, c);
      break;
    case Change::Kind::kPutUniqueLock:
      st = BindPutUniqueLock(stmts_, c);
      break;
    case Change::Kind::kDeleteUniqueLock:
      st = BindDeleteUniqueLock(stmts_, c);
      break;
    case Change::Kind::kSetCronFiring:
      st = BindSetCronFiring(stmts_, c);
      break;
    case Change::Kind::kPutRecord:
    case Change::Kind::kDeleteRecord:
      st = BindRecord(stmts_, c);
      break;
  }
  return SqliteStepDone(db_, st, "sqlite write");
}

Status SqliteChangeWriter::DeleteJobs(std::vector<int64_t>& ids) {
  std::sort(ids.begin(), ids.end());
  Status s;
  for (size_t i = 0; s.ok() && i < ids.size();) {
    size_t end = i + 1;
    while (end < ids.size() && ids[end] == ids[end - 1] + 1) ++end;
    bool run = end - i > 1;
    sqlite3_stmt* st = run ? stmts_.delete_jobs : stmts_.delete_job;
    sqlite3_bind_int64(st, 1, ids[i]);
    if (run) sqlite3_bind_int64(st, 2, ids[end - 1]);
    s = SqliteStepDone(db_, st, "sqlite write");
    i = end;
  }
  ids.clear();
  return s;
}

Status SqliteChangeWriter::AddCounter(const std::string& name, int64_t delta) {
  BindText(stmts_.add_counter, 1, name);
  sqlite3_bind_int64(stmts_.add_counter, 2, delta);
  return SqliteStepDone(db_, stmts_.add_counter, "sqlite write");
}

Status SqliteChangeWriter::WriteCommitSeq(int64_t seq) {
  sqlite3_bind_int64(stmts_.set_commit_seq, 1, seq);
  return SqliteStepDone(db_, stmts_.set_commit_seq, "sqlite write");
}

Status SqliteChangeWriter::WriteRedoSeq(int64_t seq) {
  sqlite3_bind_int64(stmts_.set_redo_seq, 1, seq);
  return SqliteStepDone(db_, stmts_.set_redo_seq, "sqlite write");
}

}  // namespace bulkhead
