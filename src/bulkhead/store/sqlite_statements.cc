#include "bulkhead/store/sqlite_statements.h"

#include <sqlite3.h>

#include <array>
#include <utility>

#include "bulkhead/store/sqlite_db.h"

namespace bulkhead {
namespace {

// Every statement: its SQL and the member of `s` that holds it. Prepare and Finalize walk it.
std::array<std::pair<const char*, sqlite3_stmt**>, 23> Statements(SqliteStatements& s) {
  return {
      {{"INSERT INTO jobs(id, jid, state, queue, jobtype, score, enqueued, reserve_for, "
        "payload)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        &s.insert_job},
       {"UPDATE jobs SET state=?2, queue=?3, score=?4, enqueued=?5, payload=?6 WHERE id=?1",
        &s.update_job},
       {"UPDATE jobs SET state=?2, score=?3 WHERE id=?1", &s.update_state},
       {"DELETE FROM jobs WHERE id=?1", &s.delete_job},
       {"DELETE FROM jobs WHERE id BETWEEN ?1 AND ?2", &s.delete_jobs},
       {"SELECT id, jid, state, queue, score, enqueued, reserve_for, jobtype, payload FROM jobs"
        " WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
        &s.read_jobs},
       {"INSERT INTO counters(name, value) VALUES(?1, ?2)"
        " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
        &s.add_counter},
       {"INSERT OR IGNORE INTO paused(queue) VALUES(?1)", &s.pause},
       {"DELETE FROM paused WHERE queue=?1", &s.unpause},
       {"INSERT OR REPLACE INTO signing_keys(key_id, pem) VALUES(?1, ?2)", &s.put_key},
       {"DELETE FROM signing_keys WHERE key_id=?1", &s.delete_key},
       {"INSERT OR REPLACE INTO host_states(host, breaker_open_until, breaker_series_openings,"
        " breaker_openings, failing_since, unavailable, retry_after_until)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        &s.put_host},
       {"DELETE FROM host_states WHERE host=?1", &s.delete_host},
       {"INSERT OR REPLACE INTO meta(key, value) VALUES('commit_seq', ?1)", &s.set_commit_seq},
       {"INSERT OR REPLACE INTO meta(key, value) VALUES('redo_seq', ?1)", &s.set_redo_seq},
       {"INSERT OR REPLACE INTO unique_locks(key, jid, until_us) VALUES(?1, ?2, ?3)",
        &s.put_unique_lock},
       {"DELETE FROM unique_locks WHERE key=?1", &s.delete_unique_lock},
       {"INSERT OR REPLACE INTO cron_firings(entry, due_us) VALUES(?1, ?2)", &s.set_cron_firing},
       {"INSERT OR REPLACE INTO records(space, key, value) VALUES(?1, ?2, ?3)", &s.put_record},
       {"DELETE FROM records WHERE space=?1 AND key=?2", &s.delete_record},
       {"BEGIN", &s.begin},
       {"COMMIT", &s.commit},
       {"ROLLBACK", &s.rollback}}};
}

}  // namespace

Status SqliteStatements::Prepare(sqlite3* db) {
  for (auto [sql, stmt] : Statements(*this)) {
    Status s = SqlitePrepare(db, sql, stmt);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void SqliteStatements::Finalize() {
  for (auto entry : Statements(*this)) {
    sqlite3_stmt** st = entry.second;
    if (*st) sqlite3_finalize(*st);
    *st = nullptr;
  }
}

}  // namespace bulkhead
