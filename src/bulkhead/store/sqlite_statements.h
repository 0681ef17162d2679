// SqliteStatements: the prepared statements SqliteChangeLog writes with, prepared once after the
// schema is in place and finalized before the connection closes. Used by the thread that owns the
// connection only.
#pragma once

#include "bulkhead/util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bulkhead {

struct SqliteStatements {
  // Prepares every statement on `db`; the first failure is returned (statements prepared before it
  // stay set, so that Finalize releases them).
  Status Prepare(sqlite3* db);
  // Finalizes every prepared statement and sets it to nullptr (a no-op for those never prepared).
  void Finalize();

  sqlite3_stmt* insert_job = nullptr;      // ?1 id .. ?9 payload
  sqlite3_stmt* update_job = nullptr;      // ?1 id, ?2 state, queue, score, enqueued, ?6 payload
  sqlite3_stmt* update_state = nullptr;    // ?1 id, ?2 state, ?3 score
  sqlite3_stmt* delete_job = nullptr;      // ?1 id
  sqlite3_stmt* delete_jobs = nullptr;     // ?1..?2 ids: every row in between
  sqlite3_stmt* read_jobs = nullptr;       // ?1..?2 ids: the columns of ReadJobColumns
  sqlite3_stmt* add_counter = nullptr;     // ?1 name, ?2 delta
  sqlite3_stmt* pause = nullptr;           // ?1 queue
  sqlite3_stmt* unpause = nullptr;         // ?1 queue
  sqlite3_stmt* put_key = nullptr;         // ?1 key id, ?2 PEM
  sqlite3_stmt* delete_key = nullptr;      // ?1 key id
  sqlite3_stmt* put_host = nullptr;        // ?1 host .. ?7 retry_after_until
  sqlite3_stmt* delete_host = nullptr;     // ?1 host
  sqlite3_stmt* set_commit_seq = nullptr;  // ?1 meta.commit_seq
  sqlite3_stmt* set_redo_seq = nullptr;    // ?1 meta.redo_seq
  // A commit's own statements, prepared once instead of parsed again at every commit.
  sqlite3_stmt* begin = nullptr;
  sqlite3_stmt* commit = nullptr;
  sqlite3_stmt* rollback = nullptr;
  // Unique jobs and cron.
  sqlite3_stmt* put_unique_lock = nullptr;     // ?1 key, ?2 jid, ?3 until_us
  sqlite3_stmt* delete_unique_lock = nullptr;  // ?1 key
  sqlite3_stmt* set_cron_firing = nullptr;     // ?1 entry, ?2 due_us
  sqlite3_stmt* put_record = nullptr;          // ?1 space, ?2 key, ?3 value
  sqlite3_stmt* delete_record = nullptr;       // ?1 space, ?2 key
};

}  // namespace bulkhead
