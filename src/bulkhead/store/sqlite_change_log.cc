#include "bulkhead/store/sqlite_change_log.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <map>
#include <unordered_set>

#include <spdlog/spdlog.h>

namespace bulkhead {
namespace {

// Schema, version 3.
//   meta(key, value): schema_version.
//   jobs: one row per job wherever it is (see JobState); `id` is assigned by MemoryState and
//     never reused while the row exists; no secondary index: the whole table is loaded at open and
//     every later write addresses a row by id.
//   counters(name, value): processed, failures, processed:YYYY-MM-DD, failures:YYYY-MM-DD.
//   paused(queue).
//   signing_keys(key_id, pem): ActivityPub signing keys (PEM private keys); FLUSH keeps them.
//   host_states(host, ...): the failing state of delivery hosts (HostStateRecord; times in µs
//     since the epoch, 0 = none); a row exists only while its host is failing; FLUSH keeps them.
// A new database file is created with mode 0600 (SQLite gives its -wal and -shm files the same
// mode): it holds private keys.
// Upgrade steps: when the schema changes, bump kSchemaVersion, add a step to kUpgrades that
// migrates version N to N+1 (run in one transaction with the version update), and keep every
// earlier step.
constexpr const char* kSchema = R"sql(
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
)sql";

// kUpgrades[i] migrates a database of version i + 1 to version i + 2. kSchema runs first on every
// open (CREATE TABLE IF NOT EXISTS), so a step only moves or rewrites data; new tables need none.
constexpr const char* kUpgrades[] = {
    "",  // 1 -> 2: signing_keys, created by kSchema
    "",  // 2 -> 3: host_states, created by kSchema
};
static_assert(std::size(kUpgrades) == SqliteChangeLog::kSchemaVersion - 1);

}  // namespace

SqliteChangeLog::SqliteChangeLog(std::string path, Store::Poster poster, std::string durability,
                                 int64_t max_page_count)
    : path_(std::move(path)),
      poster_(std::move(poster)),
      durability_(std::move(durability)),
      max_page_count_(max_page_count) {}

SqliteChangeLog::~SqliteChangeLog() { Close(); }

Status SqliteChangeLog::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return Status::Unavailable("sqlite " + path_ + ": " + msg);
  }
  return Status::Ok();
}

Status SqliteChangeLog::Prepare(const char* sql, sqlite3_stmt** stmt) {
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
    return Status::Internal("sqlite prepare failed: " + std::string(sqlite3_errmsg(db_)));
  }
  return Status::Ok();
}

Status SqliteChangeLog::OpenDatabase() {
  std::filesystem::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  // Private keys live in this file: a new one is readable by its owner only.
  if (int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); fd >= 0) {
    ::close(fd);
  }
  if (sqlite3_open_v2(path_.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    return Status::Unavailable("cannot open sqlite database " + path_ + ": " +
                               (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  }
  sqlite3_busy_timeout(db_, 5000);
  // One process owns the database: exclusive locking keeps the lock across transactions (no
  // fcntl calls per commit) and makes a second server on the same file fail to start instead of
  // interleaving writes.
  Status s = Exec("PRAGMA locking_mode=EXCLUSIVE");
  if (!s.ok()) return s;
  s = Exec("PRAGMA journal_mode=WAL");
  if (!s.ok()) return s;
  s = Exec(durability_ == "power" ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  if (!s.ok()) return s;
  Exec("PRAGMA cache_size=-65536");
  // A small WAL: checkpoint every kWalAutocheckpointPages pages and cut the file back to
  // kWalSizeLimitBytes when it restarts, so that recent commits do not pile up in a WAL the size of
  // the backlog (a restart after a full disk needs room for the WAL and what it checkpoints).
  Exec(("PRAGMA wal_autocheckpoint=" + std::to_string(kWalAutocheckpointPages)).c_str());
  Exec(("PRAGMA journal_size_limit=" + std::to_string(kWalSizeLimitBytes)).c_str());
  Exec("PRAGMA temp_store=MEMORY");
  s = Exec(kSchema);
  if (!s.ok()) return s;
  // Schema version check.
  sqlite3_stmt* st = nullptr;
  s = Prepare("SELECT value FROM meta WHERE key='schema_version'", &st);
  if (!s.ok()) return s;
  int version = 0;
  if (sqlite3_step(st) == SQLITE_ROW) version = std::atoi((const char*)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  if (version == 0) {
    s = Exec(("INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '" +
              std::to_string(kSchemaVersion) + "')").c_str());
    if (!s.ok()) return s;
  } else if (version > kSchemaVersion) {
    return Status::FailedPrecondition(
        "sqlite database " + path_ + " has schema version " + std::to_string(version) +
        ", newer than this bulkhead understands (" + std::to_string(kSchemaVersion) + ")");
  }
  for (int v = version; v != 0 && v < kSchemaVersion; ++v) {
    std::string step = std::string("BEGIN; ") + kUpgrades[v - 1] +
                       " UPDATE meta SET value='" + std::to_string(v + 1) +
                       "' WHERE key='schema_version'; COMMIT;";
    s = Exec(step.c_str());
    if (!s.ok()) {
      Exec("ROLLBACK");
      return Status(s.code(), "upgrading " + path_ + " from schema version " + std::to_string(v) +
                                  ": " + s.message());
    }
    spdlog::info("sqlite store {}: upgraded from schema version {} to {}", path_, v, v + 1);
  }
  for (auto [sql, stmt] : std::initializer_list<std::pair<const char*, sqlite3_stmt**>>{
           {"INSERT INTO jobs(id, jid, state, queue, jobtype, score, enqueued, reserve_for, "
            "payload)"
            " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &insert_},
           {"UPDATE jobs SET state=?2, queue=?3, score=?4, enqueued=?5, payload=?6 WHERE id=?1",
            &update_},
           {"UPDATE jobs SET state=?2, score=?3 WHERE id=?1", &update_state_},
           {"DELETE FROM jobs WHERE id=?1", &delete_},
           {"INSERT INTO counters(name, value) VALUES(?1, ?2)"
            " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            &counter_},
           {"INSERT OR IGNORE INTO paused(queue) VALUES(?1)", &pause_},
           {"DELETE FROM paused WHERE queue=?1", &unpause_},
           {"INSERT OR REPLACE INTO signing_keys(key_id, pem) VALUES(?1, ?2)", &put_key_},
           {"DELETE FROM signing_keys WHERE key_id=?1", &delete_key_},
           {"INSERT OR REPLACE INTO host_states(host, breaker_open_until, breaker_series_openings,"
            " breaker_openings, failing_since, unavailable, retry_after_until)"
            " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &put_host_},
           {"DELETE FROM host_states WHERE host=?1", &delete_host_}}) {
    s = Prepare(sql, stmt);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status SqliteChangeLog::Load(MemoryState& state) {
  Status s = OpenDatabase();
  if (!s.ok()) return s;
  sqlite3_stmt* st = nullptr;
  s = Prepare("SELECT id, jid, state, queue, jobtype, score, enqueued, reserve_for, payload"
              " FROM jobs", &st);
  if (!s.ok()) return s;
  size_t jobs = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    JobRecord job;
    auto text = [&](int col) {
      return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, col)),
                         sqlite3_column_bytes(st, col));
    };
    int64_t id = sqlite3_column_int64(st, 0);
    job.jid = text(1);
    job.state = static_cast<JobState>(sqlite3_column_int(st, 2));
    job.queue = text(3);
    job.jobtype = text(4);
    job.score = sqlite3_column_int64(st, 5);
    job.enqueued_us = sqlite3_column_int64(st, 6);
    job.reserve_for_s = sqlite3_column_int(st, 7);
    job.payload = text(8);
    Status ls = state.LoadJob(id, std::move(job));
    if (!ls.ok()) spdlog::warn("sqlite {}: skipping row {}: {}", path_, id, ls.message());
    ++jobs;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return Status::Unavailable("sqlite load failed: " + std::string(sqlite3_errmsg(db_)));
  Prepare("SELECT name, value FROM counters", &st);
  while (sqlite3_step(st) == SQLITE_ROW) {
    state.LoadCounter(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                      sqlite3_column_int64(st, 1));
  }
  sqlite3_finalize(st);
  Prepare("SELECT queue FROM paused", &st);
  while (sqlite3_step(st) == SQLITE_ROW) {
    state.LoadPaused(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  size_t keys = 0;
  Prepare("SELECT key_id, pem FROM signing_keys", &st);
  while (sqlite3_step(st) == SQLITE_ROW) {
    state.LoadSigningKey(
        reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
        std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)),
                    sqlite3_column_bytes(st, 1)));
    ++keys;
  }
  sqlite3_finalize(st);
  size_t hosts = 0;
  Prepare(
      "SELECT host, breaker_open_until, breaker_series_openings, breaker_openings,"
      " failing_since, unavailable, retry_after_until FROM host_states",
      &st);
  while (sqlite3_step(st) == SQLITE_ROW) {
    HostStateRecord r;
    r.host = std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                         sqlite3_column_bytes(st, 0));
    r.breaker_open_until_us = sqlite3_column_int64(st, 1);
    r.breaker_series_openings = sqlite3_column_int(st, 2);
    r.breaker_openings = sqlite3_column_int64(st, 3);
    r.failing_since_us = sqlite3_column_int64(st, 4);
    r.unavailable = sqlite3_column_int(st, 5) != 0;
    r.retry_after_until_us = sqlite3_column_int64(st, 6);
    state.LoadHostState(std::move(r));
    ++hosts;
  }
  sqlite3_finalize(st);
  state.FinishLoad();
  spdlog::info("sqlite store {}: loaded {} jobs, {} signing keys, {} failing hosts", path_, jobs,
               keys, hosts);
  struct stat file_stat;
  if (keys > 0 && ::stat(path_.c_str(), &file_stat) == 0 && (file_stat.st_mode & 077) != 0) {
    spdlog::warn("sqlite store {} holds private signing keys but is readable by others (mode {:o});"
                 " chmod 600 it", path_, file_stat.st_mode & 0777);
  }
  if (max_page_count_ > 0) {
    s = Exec(("PRAGMA max_page_count=" + std::to_string(max_page_count_)).c_str());
    if (!s.ok()) return s;
  }
  // Fold what an earlier run left in the WAL (after kill -9 or a failed commit) into the database
  // now, so that the WAL starts empty. A failure (a disk still full) is not fatal here: the first
  // commit that cannot be written puts the store in degraded mode.
  if (sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr) !=
      SQLITE_OK) {
    spdlog::warn("sqlite store {}: checkpoint at open failed: {}", path_, sqlite3_errmsg(db_));
  }
  writer_ = std::thread([this] { WriterLoop(); });
  pthread_setname_np(writer_.native_handle(), "bulkhead-sqlite");
  return Status::Ok();
}

void SqliteChangeLog::Append(std::vector<Change> changes, std::function<void(Status)> durable) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The writer re-checks pending_ after every commit, so only the first append since it last
    // took the list needs to wake it.
    wake = pending_.empty();
    pending_.push_back(Pending{std::move(changes), std::move(durable)});
  }
  if (wake) cv_.notify_one();
}

void SqliteChangeLog::WriterLoop() {
  std::vector<Pending> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty() && stopping_) break;
      batch.swap(pending_);
    }
    Status s;
    if (failed_.load(std::memory_order_acquire)) {
      // After a failed commit nothing more is written: a later batch may depend on the lost one
      // (an update of a row whose insert failed), and the file must keep a prefix of the history.
      s = failure();
    } else {
      s = CommitBatch(batch);
      if (!s.ok()) {
        spdlog::error(
            "sqlite commit to {} failed: {}; the store is degraded: every change is refused until "
            "bulkhead restarts",
            path_, s.message());
        {
          std::lock_guard<std::mutex> lock(mu_);
          failure_ = Status::Unavailable("the last commit to " + path_ + " failed: " + s.message());
        }
        failed_.store(true, std::memory_order_release);
      }
    }
    // One post per batch carries every completion of the batch back to the event loop.
    auto callbacks = std::make_shared<std::vector<std::function<void(Status)>>>();
    callbacks->reserve(batch.size());
    for (auto& p : batch) {
      if (p.durable) callbacks->push_back(std::move(p.durable));
    }
    batch.clear();
    if (!callbacks->empty()) {
      poster_([callbacks, s] {
        for (auto& cb : *callbacks) cb(s);
      });
    }
  }
}

Status SqliteChangeLog::ApplyChange(const Change& c,
                                    std::map<std::string, int64_t>& counter_deltas) {
  sqlite3_stmt* st = nullptr;
  switch (c.kind) {
    case Change::Kind::kInsertJob:
      st = insert_;
      sqlite3_bind_int64(st, 1, c.id);
      sqlite3_bind_text(st, 2, c.job.jid.data(), (int)c.job.jid.size(), SQLITE_STATIC);
      sqlite3_bind_int(st, 3, static_cast<int>(c.job.state));
      sqlite3_bind_text(st, 4, c.job.queue.data(), (int)c.job.queue.size(), SQLITE_STATIC);
      sqlite3_bind_text(st, 5, c.job.jobtype.data(), (int)c.job.jobtype.size(), SQLITE_STATIC);
      sqlite3_bind_int64(st, 6, c.job.score);
      sqlite3_bind_int64(st, 7, c.job.enqueued_us);
      sqlite3_bind_int(st, 8, c.job.reserve_for_s);
      sqlite3_bind_text(st, 9, c.job.payload.data(), (int)c.job.payload.size(), SQLITE_STATIC);
      break;
    case Change::Kind::kUpdateJob:
      st = update_;
      sqlite3_bind_int64(st, 1, c.id);
      sqlite3_bind_int(st, 2, static_cast<int>(c.job.state));
      sqlite3_bind_text(st, 3, c.job.queue.data(), (int)c.job.queue.size(), SQLITE_STATIC);
      sqlite3_bind_int64(st, 4, c.job.score);
      sqlite3_bind_int64(st, 5, c.job.enqueued_us);
      sqlite3_bind_text(st, 6, c.job.payload.data(), (int)c.job.payload.size(), SQLITE_STATIC);
      break;
    case Change::Kind::kUpdateState:
      st = update_state_;
      sqlite3_bind_int64(st, 1, c.id);
      sqlite3_bind_int(st, 2, static_cast<int>(c.job.state));
      sqlite3_bind_int64(st, 3, c.job.score);
      break;
    case Change::Kind::kDeleteJob:
      st = delete_;
      sqlite3_bind_int64(st, 1, c.id);
      break;
    case Change::Kind::kAddCounter:
      counter_deltas[c.name] += c.delta;  // written once per transaction
      return Status::Ok();
    case Change::Kind::kSetPaused:
      st = c.flag ? pause_ : unpause_;
      sqlite3_bind_text(st, 1, c.name.data(), (int)c.name.size(), SQLITE_STATIC);
      break;
    case Change::Kind::kDeleteAll:
      // FLUSH keeps signing_keys and host_states.
      counter_deltas.clear();
      return Exec("DELETE FROM jobs; DELETE FROM counters; DELETE FROM paused;");
    case Change::Kind::kPutSigningKey:
      st = put_key_;
      sqlite3_bind_text(st, 1, c.name.data(), (int)c.name.size(), SQLITE_STATIC);
      sqlite3_bind_text(st, 2, c.value.data(), (int)c.value.size(), SQLITE_STATIC);
      break;
    case Change::Kind::kDeleteSigningKey:
      st = delete_key_;
      sqlite3_bind_text(st, 1, c.name.data(), (int)c.name.size(), SQLITE_STATIC);
      break;
    case Change::Kind::kPutHostState: {
      const HostStateRecord& r = c.host_state;
      st = put_host_;
      sqlite3_bind_text(st, 1, r.host.data(), (int)r.host.size(), SQLITE_STATIC);
      sqlite3_bind_int64(st, 2, r.breaker_open_until_us);
      sqlite3_bind_int(st, 3, r.breaker_series_openings);
      sqlite3_bind_int64(st, 4, r.breaker_openings);
      sqlite3_bind_int64(st, 5, r.failing_since_us);
      sqlite3_bind_int(st, 6, r.unavailable ? 1 : 0);
      sqlite3_bind_int64(st, 7, r.retry_after_until_us);
      break;
    }
    case Change::Kind::kDeleteHostState:
      st = delete_host_;
      sqlite3_bind_text(st, 1, c.name.data(), (int)c.name.size(), SQLITE_STATIC);
      break;
  }
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_DONE) {
    return Status::Unavailable("sqlite write failed: " + std::string(sqlite3_errmsg(db_)));
  }
  return Status::Ok();
}

Status SqliteChangeLog::CommitBatch(std::vector<Pending>& batch) {
  Status s = Exec("BEGIN");
  if (!s.ok()) return s;
  std::map<std::string, int64_t> counter_deltas;
  // Rows deleted in this batch need none of their earlier updates written, and rows both inserted
  // and deleted in it need no write at all (row ids are never reused, so an update or insert of a
  // deleted id always comes before its delete).
  std::unordered_set<int64_t> deleted, inserted;
  for (const auto& p : batch) {
    for (const auto& c : p.changes) {
      if (c.kind == Change::Kind::kDeleteJob) deleted.insert(c.id);
      if (c.kind == Change::Kind::kDeleteAll) deleted.clear();
    }
  }
  for (const auto& p : batch) {
    for (const auto& c : p.changes) {
      if (deleted.contains(c.id)) {
        if (c.kind == Change::Kind::kInsertJob) {
          inserted.insert(c.id);
          continue;
        }
        if (c.kind == Change::Kind::kUpdateJob || c.kind == Change::Kind::kUpdateState) continue;
        if (c.kind == Change::Kind::kDeleteJob && inserted.contains(c.id)) continue;
      }
      Status cs = ApplyChange(c, counter_deltas);
      if (!cs.ok()) {
        Exec("ROLLBACK");
        return cs;
      }
    }
  }
  for (const auto& [name, delta] : counter_deltas) {
    sqlite3_bind_text(counter_, 1, name.data(), (int)name.size(), SQLITE_STATIC);
    sqlite3_bind_int64(counter_, 2, delta);
    int rc = sqlite3_step(counter_);
    sqlite3_reset(counter_);
    if (rc != SQLITE_DONE) {
      Exec("ROLLBACK");
      return Status::Unavailable("sqlite counter write failed: " + std::string(sqlite3_errmsg(db_)));
    }
  }
  return Exec("COMMIT");
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
  }
  cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  for (sqlite3_stmt* st : {insert_, update_, update_state_, delete_, counter_, pause_, unpause_,
                           put_key_, delete_key_, put_host_, delete_host_}) {
    if (st) sqlite3_finalize(st);
  }
  insert_ = update_ = update_state_ = delete_ = counter_ = pause_ = unpause_ = nullptr;
  put_key_ = delete_key_ = put_host_ = delete_host_ = nullptr;
  if (db_) sqlite3_close(db_);
  db_ = nullptr;
}

}  // namespace bulkhead
