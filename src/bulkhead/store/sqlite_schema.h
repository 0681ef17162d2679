// The schema of the `sqlite:` store (SqliteChangeLog) and the steps that upgrade an older file.
#pragma once

namespace bulkhead {

// Schema, version 4.
//   meta(key, value): schema_version.
//   jobs: one row per job wherever it is (see JobState); `id` is assigned by MemoryState and
//     never reused while the row exists; no secondary index: the whole table is loaded at open
//     (queued rows stay in memory without their payload, read back by id when fetched:
//     queue_slot.h) and every later write or read addresses a row by id.
//   counters(name, value): processed, failures, processed:YYYY-MM-DD, failures:YYYY-MM-DD.
//   paused(queue).
//   signing_keys(key_id, pem): ActivityPub signing keys (PEM private keys); FLUSH keeps them.
//   host_states(host, ...): the failing state of delivery hosts (HostStateRecord; times in µs
//     since the epoch, 0 = none); a row exists only while its host is failing; FLUSH keeps them.
//   unique_locks(key, jid, until_us): unique-job locks (expired rows are purged lazily);
//     FLUSH deletes them.
//   cron_firings(entry, due_us): each cron entry's last claimed firing; FLUSH keeps them.
//   records(space, key, value): the Enterprise features' records (batches, batch members and
//     callbacks, job tracking; store/batch_book.h, store/track_book.h); FLUSH deletes them.
// A new database file is created with mode 0600 (SQLite gives its -wal and -shm files the same
// mode): it holds private keys.
// Upgrade steps: when the schema changes, bump SqliteChangeLog::kSchemaVersion, add a step to
// kSqliteUpgrades that migrates version N to N+1 (run in one transaction with the version update),
// and keep every earlier step.
inline constexpr const char* kSqliteSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY,
  jid TEXT NOT NULL,
  state INTEGER NOT NULL,
  queue TEXT NOT NULL,
  jobtype TEXT NOT NULL,
  score INTEGER NOT NULL,
  enqueued INTEGER NOT NULL,
  reserve_for INTEGER NOT NULL,
  payload TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS paused(queue TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS signing_keys(key_id TEXT PRIMARY KEY, pem TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS host_states(
  host TEXT PRIMARY KEY,
  breaker_open_until INTEGER NOT NULL,
  breaker_series_openings INTEGER NOT NULL,
  breaker_openings INTEGER NOT NULL,
  failing_since INTEGER NOT NULL,
  unavailable INTEGER NOT NULL,
  retry_after_until INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS unique_locks(
  key TEXT PRIMARY KEY, jid TEXT NOT NULL, until_us INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cron_firings(entry TEXT PRIMARY KEY, due_us INTEGER NOT NULL)
  WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records(
  space TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(space, key))
  WITHOUT ROWID;
)sql";

// kSqliteUpgrades[i] migrates a database of version i + 1 to version i + 2. kSqliteSchema runs
// first on every open (CREATE TABLE IF NOT EXISTS), so a step only moves or rewrites data; new
// tables need none.
inline constexpr const char* kSqliteUpgrades[] = {
    "",  // 1 -> 2: signing_keys, created by kSqliteSchema
    "",  // 2 -> 3: host_states, created by kSqliteSchema
    "",  // 3 -> 4: unique_locks, cron_firings and records, created by kSqliteSchema
};

}  // namespace bulkhead
