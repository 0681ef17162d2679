#include "bulkhead/store/sqlite_change_log.h"

#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>

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

// How many damaged rows a refusal names (it counts them all).
constexpr size_t kBadRowsNamed = 5;

std::string RestoreOrRecoverTodo(const std::string& path) {
  return "Restore it from a backup; or keep what SQLite can still read: sqlite3 " + path +
         " .recover | sqlite3 " + path + ".recovered, check it, then replace " + path +
         " with it and delete " + path + "-wal and " + path + "-commits";
}

// Column `col` of the current row as a string (empty for NULL).
std::string Text(sqlite3_stmt* st, int col) {
  const char* p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
  return p ? std::string(p, sqlite3_column_bytes(st, col)) : std::string();
}

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

// SAX handler that accepts a JSON object and captures its top-level "jid" when it is a string.
class PayloadCheck final : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t& v) override {
    if (depth_ == 1 && jid_key_) jid_ = v;
    return Value();
  }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override {
    if (depth_ == 0 && seen_root_) return false;
    is_object_ = is_object_ || depth_ == 0;
    seen_root_ = true;
    ++depth_;
    jid_key_ = false;
    return true;
  }
  bool key(string_t& k) override {
    jid_key_ = depth_ == 1 && k == "jid";
    return true;
  }
  bool end_object() override {
    --depth_;
    jid_key_ = false;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return false;  // the root must be an object
    ++depth_;
    jid_key_ = false;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  bool is_object() const { return is_object_; }
  const std::optional<std::string>& jid() const { return jid_; }

 private:
  bool Value() {
    jid_key_ = false;
    return depth_ > 0;  // a scalar root is not a job
  }
  int depth_ = 0;
  bool seen_root_ = false;
  bool is_object_ = false;
  bool jid_key_ = false;
  std::optional<std::string> jid_;
};

// Why a stored row cannot be served, or "" when it can.
std::string RowProblem(int state, const JobRecord& job) {
  if (state < static_cast<int>(JobState::kQueued) || state > static_cast<int>(JobState::kWorking)) {
    return "unknown state " + std::to_string(state);
  }
  PayloadCheck check;
  bool parsed = nlohmann::json::sax_parse(job.payload, &check);
  if (!parsed || !check.is_object()) return "payload is not a JSON object";
  if (!check.jid() || *check.jid() != job.jid) return "payload's jid is not the row's";
  return "";
}

// Records `seq` in the side file (fixed width, so that it overwrites the previous number).
void RecordCommit(int fd, int64_t seq) {
  char buf[24];
  int n = std::snprintf(buf, sizeof(buf), "%020lld\n", static_cast<long long>(seq));
  if (::pwrite(fd, buf, n, 0) != n) {
    // Only a smaller number than the database's is left behind: the check stays silent.
    spdlog::warn("cannot record commit {} in its side file: {}", seq, std::strerror(errno));
  }
}

}  // namespace

SqliteChangeLog::SqliteChangeLog(std::string path, Store::Poster poster, std::string durability,
                                 int64_t max_page_count, bool salvage_damaged_jobs)
    : path_(std::move(path)),
      poster_(std::move(poster)),
      durability_(std::move(durability)),
      max_page_count_(max_page_count),
      salvage_(salvage_damaged_jobs) {}

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

Status SqliteChangeLog::ForEachRow(const char* sql, const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* st = nullptr;
  Status s = Prepare(sql, &st);
  if (!s.ok()) return s;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  std::string error = rc == SQLITE_DONE ? std::string() : sqlite3_errmsg(db_);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    return Status::Unavailable("sqlite store " + path_ + ": reading (" + sql +
                               ") failed: " + error);
  }
  return Status::Ok();
}

Status SqliteChangeLog::Damaged(const std::string& problem, const std::string& todo) const {
  return Status::FailedPrecondition("store file " + path_ + " " + problem +
                                    "; bulkhead refuses to start on it and has not changed it. " +
                                    todo);
}

void SqliteChangeLog::Abandon() {
  for (sqlite3_stmt* st : {insert_, update_, update_state_, delete_, counter_, pause_, unpause_,
                           put_key_, delete_key_, put_host_, delete_host_, commit_seq_stmt_}) {
    if (st) sqlite3_finalize(st);
  }
  insert_ = update_ = update_state_ = delete_ = counter_ = pause_ = unpause_ = nullptr;
  put_key_ = delete_key_ = put_host_ = delete_host_ = commit_seq_stmt_ = nullptr;
  if (db_) {
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
    // The empty WAL that opening made, if there was none.
    struct stat wal_st;
    const std::string wal = path_ + "-wal";
    if (!wal_existed_ && ::stat(wal.c_str(), &wal_st) == 0 && wal_st.st_size == 0) {
      ::unlink(wal.c_str());
    }
  }
  if (commits_fd_ >= 0) ::close(commits_fd_);
  commits_fd_ = -1;
}

Status SqliteChangeLog::CreateStore() {
  const std::string tmp = path_ + ".new";
  // Leftovers of a start that died in here.
  std::filesystem::remove(tmp);
  std::filesystem::remove(tmp + "-journal");
  // Private keys live in this file: a new one is readable by its owner only.
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot create sqlite database " + tmp + ": " +
                               std::strerror(errno));
  }
  ::close(fd);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(tmp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::string sql =
      std::string("BEGIN; ") + kSchema + "INSERT INTO meta(key, value) VALUES('schema_version', '" +
      std::to_string(kSchemaVersion) + "'), ('commit_seq', '0'), ('clean_shutdown', '1'); COMMIT;";
  char* err = nullptr;
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : (db ? sqlite3_errmsg(db) : "out of memory");
  sqlite3_free(err);
  sqlite3_close(db);
  if (rc != SQLITE_OK) {
    std::filesystem::remove(tmp);
    return Status::Unavailable("cannot create sqlite database " + tmp + ": " + msg);
  }
  // The side file of an earlier store at this path does not count for the new one.
  std::filesystem::remove(CommitsPath());
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    return Status::Unavailable("cannot rename " + tmp + " to " + path_ + ": " +
                               std::strerror(errno));
  }
  spdlog::info("sqlite store {}: created", path_);
  return Status::Ok();
}

Status SqliteChangeLog::OpenDatabase() {
  std::filesystem::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string wal = path_ + "-wal";
  struct stat st;
  struct stat wal_st;
  wal_existed_ = ::stat(wal.c_str(), &wal_st) == 0;
  bool wal_has_frames = wal_existed_ && wal_st.st_size > 0;
  if (::stat(path_.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return Status::Unavailable("cannot open sqlite database " + path_ + ": " +
                                 std::strerror(errno));
    }
    if (wal_has_frames) {
      return Status::FailedPrecondition(
          "store file " + path_ + " does not exist but its write-ahead log " + wal +
          " does: the store was removed without it; bulkhead refuses to start a new store beside "
          "an old log. Restore " +
          path_ + " from a backup, or delete " + wal + " to start a new, empty store");
    }
    Status s = CreateStore();
    if (!s.ok()) return s;
  } else if (st.st_size == 0 && !wal_has_frames) {
    // bulkhead never leaves an empty file at path_ (CreateStore renames a complete one into
    // place), so this is a store that lost its content, or a file made by something else.
    return Damaged("exists but is empty (0 bytes), so it holds no bulkhead store",
                   "If it should hold jobs, restore it from a backup; if a new, empty store is "
                   "intended, delete " +
                       path_ + " and start again");
  }
  const std::string not_a_store_todo =
      "If it should hold jobs, it is damaged: restore it from a backup; if it is not bulkhead's "
      "file, give the store another path (--store sqlite:PATH)";
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    return Status::Unavailable("cannot open sqlite database " + path_ + ": " +
                               (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  }
  sqlite3_busy_timeout(db_, 5000);
  // One process owns the database: exclusive locking keeps the lock across transactions (no
  // fcntl calls per commit) and makes a second server on the same file fail to start instead of
  // interleaving writes.
  Status s = Exec("PRAGMA locking_mode=EXCLUSIVE");
  if (!s.ok()) return s;
  Exec("PRAGMA cache_size=-65536");
  Exec("PRAGMA temp_store=MEMORY");

  // Read-only checks first (SQLite reads a WAL-mode file through its WAL whatever journal_mode
  // says): nothing is written to a file that is refused.
  std::map<std::string, std::string> meta;
  {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT key, value FROM meta", -1, &st, nullptr) != SQLITE_OK) {
      std::string err = sqlite3_errmsg(db_);
      int code = sqlite3_errcode(db_);
      if (code == SQLITE_NOTADB) {
        return Damaged("is not a bulkhead store (SQLite: " + err + ")", not_a_store_todo);
      }
      if (code == SQLITE_CORRUPT) {
        return Damaged("is damaged (SQLite: " + err + ")", RestoreOrRecoverTodo(path_));
      }
      return Damaged("is an SQLite database without bulkhead's tables (" + err + ")",
                     not_a_store_todo + "; if a new, empty store is intended, delete " + path_ +
                         " and start again");
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      meta[Text(st, 0)] = Text(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
      return Damaged("is damaged (SQLite: " + std::string(sqlite3_errmsg(db_)) + ")",
                     RestoreOrRecoverTodo(path_));
    }
  }
  int version = meta.contains("schema_version") ? std::atoi(meta["schema_version"].c_str()) : 0;
  if (version <= 0) {
    return Damaged("is an SQLite database without bulkhead's schema (no meta.schema_version)",
                   not_a_store_todo + "; if a new, empty store is intended, delete " + path_ +
                       " and start again");
  }
  if (version > kSchemaVersion) {
    return Status::FailedPrecondition(
        "sqlite database " + path_ + " has schema version " + std::to_string(version) +
        ", newer than this bulkhead understands (" + std::to_string(kSchemaVersion) + ")");
  }
  commit_seq_ = meta.contains("commit_seq") ? std::atoll(meta["commit_seq"].c_str()) : 0;
  s = CheckCommits(commit_seq_);
  if (!s.ok()) return s;
  if (meta["clean_shutdown"] != "1") {
    s = QuickCheck();
    if (!s.ok()) return s;
  }

  s = Exec("PRAGMA journal_mode=WAL");
  if (!s.ok()) return s;
  s = Exec(durability_ == "power" ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  if (!s.ok()) return s;
  // A small WAL: checkpoint every kWalAutocheckpointPages pages and cut the file back to
  // kWalSizeLimitBytes when it restarts, so that recent commits do not pile up in a WAL the size of
  // the backlog (a restart after a full disk needs room for the WAL and what it checkpoints).
  Exec(("PRAGMA wal_autocheckpoint=" + std::to_string(kWalAutocheckpointPages)).c_str());
  Exec(("PRAGMA journal_size_limit=" + std::to_string(kWalSizeLimitBytes)).c_str());
  s = Exec(kSchema);
  if (!s.ok()) return s;
  for (int v = version; v < kSchemaVersion; ++v) {
    std::string step = std::string("BEGIN; ") + kUpgrades[v - 1] + " UPDATE meta SET value='" +
                       std::to_string(v + 1) + "' WHERE key='schema_version'; COMMIT;";
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
           {"DELETE FROM host_states WHERE host=?1", &delete_host_},
           {"INSERT OR REPLACE INTO meta(key, value) VALUES('commit_seq', ?1)",
            &commit_seq_stmt_}}) {
    s = Prepare(sql, stmt);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status SqliteChangeLog::CheckCommits(int64_t db_seq) {
  std::ifstream in(CommitsPath());
  if (!in) return Status::Ok();  // no side file: a store from before it existed, or removed
  int64_t recorded = 0;
  if (!(in >> recorded)) return Status::Ok();  // unreadable: nothing to compare
  if (recorded <= db_seq) return Status::Ok();
  return Damaged(
      "lost " + std::to_string(recorded - db_seq) +
          " acknowledged commits: the database ends at commit " + std::to_string(db_seq) + " but " +
          CommitsPath() + " recorded commit " + std::to_string(recorded) +
          " (SQLite stops replaying the write-ahead log " + path_ +
          "-wal at its first damaged frame, and a removed or truncated -wal loses its commits)",
      "Keep a copy of " + path_ + ", " + path_ + "-wal and " + CommitsPath() +
          ". Restore the store from a backup, or accept the loss: delete " + CommitsPath() +
          " and start again (the store then holds what SQLite could replay). If you restored " +
          path_ + " from a backup on purpose, delete " + CommitsPath() + " too");
}

Status SqliteChangeLog::QuickCheck() {
  auto start = std::chrono::steady_clock::now();
  sqlite3_stmt* st = nullptr;
  std::vector<std::string> problems;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA quick_check(5)", -1, &st, nullptr);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      std::string line = Text(st, 0);
      if (line != "ok") problems.push_back(line);
    }
  }
  if (rc != SQLITE_DONE) problems.push_back(sqlite3_errmsg(db_));
  sqlite3_finalize(st);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  if (!problems.empty()) {
    std::string found;
    for (const auto& p : problems) found += (found.empty() ? "" : "; ") + p;
    return Damaged("is damaged: PRAGMA quick_check after an unclean stop found: " + found,
                   RestoreOrRecoverTodo(path_));
  }
  spdlog::info("sqlite store {}: the last stop was not clean; quick_check passed in {} ms", path_,
               ms);
  return Status::Ok();
}

Status SqliteChangeLog::LoadJobs(MemoryState& state) {
  sqlite3_stmt* st = nullptr;
  Status s = Prepare(
      "SELECT id, jid, state, queue, jobtype, score, enqueued, reserve_for, payload"
      " FROM jobs",
      &st);
  if (!s.ok()) return s;
  size_t jobs = 0;
  std::vector<std::pair<int64_t, std::string>> bad;  // row id, what is wrong
  std::string first_bad;  // "id N (jid "..."): reason, ..." for the first few
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    JobRecord job;
    int64_t id = sqlite3_column_int64(st, 0);
    job.jid = Text(st, 1);
    int job_state = sqlite3_column_int(st, 2);
    job.queue = Text(st, 3);
    job.jobtype = Text(st, 4);
    job.score = sqlite3_column_int64(st, 5);
    job.enqueued_us = sqlite3_column_int64(st, 6);
    job.reserve_for_s = sqlite3_column_int(st, 7);
    job.payload = Text(st, 8);
    std::string problem = RowProblem(job_state, job);
    if (!problem.empty()) {
      if (bad.size() < kBadRowsNamed) {
        first_bad += (first_bad.empty() ? "" : ", ") + std::string("id ") + std::to_string(id) +
                     " (jid " + Printable(job.jid) + "): " + problem;
      }
      bad.emplace_back(id, std::move(problem));
      continue;
    }
    job.state = static_cast<JobState>(job_state);
    Status ls = state.LoadJob(id, std::move(job));
    if (!ls.ok()) spdlog::warn("sqlite {}: skipping row {}: {}", path_, id, ls.message());
    ++jobs;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    return Damaged(
        "is damaged: reading its jobs failed (SQLite: " + std::string(sqlite3_errmsg(db_)) + ")",
        RestoreOrRecoverTodo(path_));
  }
  if (!bad.empty() && !salvage_) {
    return Damaged(
        "holds " + std::to_string(bad.size()) +
            " damaged jobs (a payload that is not a JSON object carrying the row's jid, or an "
            "unknown state), which bulkhead never hands to a worker: " +
            first_bad + (bad.size() > kBadRowsNamed ? ", ..." : ""),
        "Restore the store from a backup; or keep the other jobs: start once with "
        "`bulkhead serve --salvage-damaged-jobs`, which moves the damaged rows to the "
        "table damaged_jobs of " +
            path_ + " (kept for inspection, never served)");
  }
  if (!bad.empty()) {
    s = Exec(
        "CREATE TABLE IF NOT EXISTS damaged_jobs(id INTEGER PRIMARY KEY, jid, state, queue, "
        "jobtype, score, enqueued, reserve_for, payload, reason TEXT NOT NULL)");
    sqlite3_stmt* move = nullptr;
    if (s.ok()) s = Exec("BEGIN");
    if (s.ok()) {
      s = Prepare(
          "INSERT OR REPLACE INTO damaged_jobs SELECT id, jid, state, queue, jobtype, score,"
          " enqueued, reserve_for, payload, ?2 FROM jobs WHERE id=?1; ",
          &move);
    }
    for (size_t i = 0; s.ok() && i < bad.size(); ++i) {
      sqlite3_bind_int64(move, 1, bad[i].first);
      sqlite3_bind_text(move, 2, bad[i].second.data(), (int)bad[i].second.size(), SQLITE_STATIC);
      if (sqlite3_step(move) != SQLITE_DONE) {
        s = Status::Unavailable("sqlite " + path_ + ": " + sqlite3_errmsg(db_));
      }
      sqlite3_reset(move);
      if (s.ok()) {
        sqlite3_bind_int64(delete_, 1, bad[i].first);
        if (sqlite3_step(delete_) != SQLITE_DONE) {
          s = Status::Unavailable("sqlite " + path_ + ": " + sqlite3_errmsg(db_));
        }
        sqlite3_reset(delete_);
      }
    }
    if (move) sqlite3_finalize(move);
    if (s.ok()) s = Exec("COMMIT");
    if (!s.ok()) {
      Exec("ROLLBACK");
      return Status(s.code(), "moving damaged jobs to damaged_jobs: " + s.message());
    }
    spdlog::warn("sqlite store {}: moved {} damaged jobs to the table damaged_jobs ({}{})", path_,
                 bad.size(), first_bad, bad.size() > kBadRowsNamed ? ", ..." : "");
  }
  spdlog::info("sqlite store {}: loaded {} jobs", path_, jobs);
  return Status::Ok();
}

Status SqliteChangeLog::Load(MemoryState& state) {
  Status s = OpenDatabase();
  if (s.ok()) s = LoadJobs(state);
  if (!s.ok()) {
    Abandon();
    return s;
  }
  size_t keys = 0;
  size_t hosts = 0;
  s = ForEachRow("SELECT name, value FROM counters", [&](sqlite3_stmt* st) {
    state.LoadCounter(Text(st, 0), sqlite3_column_int64(st, 1));
  });
  if (s.ok()) {
    s = ForEachRow("SELECT queue FROM paused",
                   [&](sqlite3_stmt* st) { state.LoadPaused(Text(st, 0)); });
  }
  if (s.ok()) {
    s = ForEachRow("SELECT key_id, pem FROM signing_keys", [&](sqlite3_stmt* st) {
      state.LoadSigningKey(Text(st, 0), Text(st, 1));
      ++keys;
    });
  }
  if (s.ok()) {
    s = ForEachRow(
        "SELECT host, breaker_open_until, breaker_series_openings, breaker_openings,"
        " failing_since, unavailable, retry_after_until FROM host_states",
        [&](sqlite3_stmt* st) {
          HostStateRecord r;
          r.host = Text(st, 0);
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
  if (!s.ok()) {
    Abandon();
    return s;
  }
  state.FinishLoad();
  spdlog::info("sqlite store {}: loaded {} signing keys, {} failing hosts", path_, keys, hosts);
  struct stat file_stat;
  if (keys > 0 && ::stat(path_.c_str(), &file_stat) == 0 && (file_stat.st_mode & 077) != 0) {
    spdlog::warn(
        "sqlite store {} holds private signing keys but is readable by others (mode {:o});"
        " chmod 600 it",
        path_, file_stat.st_mode & 0777);
  }
  // Running from now on: a stop that does not reach Close is unclean.
  s = Exec(("INSERT OR REPLACE INTO meta(key, value) VALUES('clean_shutdown', '0'),"
            " ('commit_seq', '" +
            std::to_string(commit_seq_) + "')")
               .c_str());
  if (!s.ok()) {
    Abandon();
    return s;
  }
  // Fold what an earlier run left in the WAL (after kill -9 or a failed commit) into the database
  // now, so that the WAL starts empty. A failure (a disk still full) is not fatal here: the first
  // commit that cannot be written puts the store in degraded mode.
  if (sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr) !=
      SQLITE_OK) {
    spdlog::warn("sqlite store {}: checkpoint at open failed: {}", path_, sqlite3_errmsg(db_));
  }
  commits_fd_ = ::open(CommitsPath().c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (commits_fd_ < 0) {
    Status err = Status::Unavailable("cannot open " + CommitsPath() + ": " + std::strerror(errno));
    Abandon();
    return err;
  }
  RecordCommit(commits_fd_, commit_seq_);
  if (max_page_count_ > 0) {
    s = Exec(("PRAGMA max_page_count=" + std::to_string(max_page_count_)).c_str());
    if (!s.ok()) return s;
  }
  loaded_ = true;
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
      return Status::Unavailable("sqlite counter write failed: " +
                                 std::string(sqlite3_errmsg(db_)));
    }
  }
  sqlite3_bind_int64(commit_seq_stmt_, 1, commit_seq_ + 1);
  int rc = sqlite3_step(commit_seq_stmt_);
  sqlite3_reset(commit_seq_stmt_);
  if (rc != SQLITE_DONE) {
    Exec("ROLLBACK");
    return Status::Unavailable("sqlite write failed: " + std::string(sqlite3_errmsg(db_)));
  }
  s = Exec("COMMIT");
  if (!s.ok()) return s;
  // After the commit, before anyone hears of it: the side file never runs ahead of the database.
  RecordCommit(commits_fd_, ++commit_seq_);
  return Status::Ok();
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
                           put_key_, delete_key_, put_host_, delete_host_, commit_seq_stmt_}) {
    if (st) sqlite3_finalize(st);
  }
  insert_ = update_ = update_state_ = delete_ = counter_ = pause_ = unpause_ = nullptr;
  put_key_ = delete_key_ = put_host_ = delete_host_ = commit_seq_stmt_ = nullptr;
  // Everything appended is committed: the next open can skip the integrity check. Not after a
  // failed commit (the file may have been hurt by whatever made it fail).
  if (db_ && loaded_ && !failed_.load(std::memory_order_acquire)) {
    Status s = Exec("UPDATE meta SET value='1' WHERE key='clean_shutdown'");
    if (!s.ok())
      spdlog::warn("sqlite store {}: cannot mark the stop clean: {}", path_, s.message());
  }
  if (db_) sqlite3_close(db_);
  db_ = nullptr;
  if (commits_fd_ >= 0) ::close(commits_fd_);
  commits_fd_ = -1;
}

}  // namespace bulkhead
