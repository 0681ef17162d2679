// SqliteChangeLog: opening the file. A missing store is created; an existing one is checked
// (read-only) before anything is written to it: empty file, not SQLite, no bulkhead schema,
// a newer schema, lost commits, and after an unclean stop PRAGMA quick_check.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/sqlite_db.h"
#include "bulkhead/store/sqlite_schema.h"

namespace bulkhead {
namespace {

static_assert(std::size(kSqliteUpgrades) == SqliteChangeLog::kSchemaVersion - 1);

// What to do about a file that is not bulkhead's, or not readable as its store.
constexpr const char* kNotAStoreTodo =
    "If it should hold jobs, it is damaged: restore it from a backup; if it is not bulkhead's "
    "file, give the store another path (--store sqlite:PATH)";

}  // namespace

Status SqliteChangeLog::Damaged(const std::string& problem, const std::string& todo) const {
  return Status::FailedPrecondition("store file " + path_ + " " + problem +
                                    "; bulkhead refuses to start on it and has not changed it. " +
                                    todo);
}

std::string SqliteChangeLog::RestoreOrRecoverTodo() const {
  return "Restore it from a backup; or keep what SQLite can still read: sqlite3 " + path_ +
         " .recover | sqlite3 " + path_ + ".recovered, check it, then replace " + path_ +
         " with it and delete " + path_ + "-wal and " + path_ + "-commits";
}

void SqliteChangeLog::Abandon() {
  stmts_.Finalize();
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
  std::string sql = std::string("BEGIN; ") + kSqliteSchema +
                    "INSERT INTO meta(key, value) VALUES('schema_version', '" +
                    std::to_string(kSchemaVersion) +
                    "'), ('commit_seq', '0'), ('clean_shutdown', '1'); COMMIT;";
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

// The read took the lock (held: exclusive mode). A `bulkhead restore` may have put another file
// at the path while this one waited for it (store/sqlite_restore.h): serve no replaced file.
Status SqliteChangeLog::CheckNotReplaced(const struct stat& opened) const {
  struct stat locked {};
  if (::stat(path_.c_str(), &locked) != 0 || locked.st_ino != opened.st_ino ||
      locked.st_dev != opened.st_dev) {
    return Status::FailedPrecondition("sqlite store " + path_ +
                                      " was replaced while bulkhead opened it (a `bulkhead "
                                      "restore`?); start bulkhead again to open the new file");
  }
  return Status::Ok();
}

Status SqliteChangeLog::OpenDatabase() {
  DisableSqliteMemoryStatistics();
  Status s = CheckOrCreateFile();
  if (!s.ok()) return s;
  struct stat opened {};
  if (::stat(path_.c_str(), &opened) != 0) {
    return Status::Unavailable("cannot stat " + path_ + ": " + std::strerror(errno));
  }
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    return Status::Unavailable("cannot open sqlite database " + path_ + ": " +
                               (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  }
  sqlite3_busy_timeout(db_, 5000);
  // One process owns the database: exclusive locking keeps the lock across transactions (no
  // fcntl calls per commit) and makes a second server on the same file fail to start instead of
  // interleaving writes.
  s = SqliteExec(db_, path_, "PRAGMA locking_mode=EXCLUSIVE");
  if (!s.ok()) return s;
  // Performance settings: when one is refused SQLite keeps its default, which is slower but safe.
  for (const char* pragma : {"PRAGMA cache_size=-65536", "PRAGMA temp_store=MEMORY"}) {
    if (Status t = SqliteExec(db_, path_, pragma); !t.ok())
      spdlog::warn("sqlite store {}: {}", path_, t.message());
  }

  // Read-only checks first (SQLite reads a WAL-mode file through its WAL whatever journal_mode
  // says): nothing is written to a file that is refused.
  std::map<std::string, std::string> meta;
  s = ReadMeta(meta);
  if (!s.ok()) return s;
  s = CheckNotReplaced(opened);
  if (!s.ok()) return s;
  int version = meta.contains("schema_version") ? std::atoi(meta["schema_version"].c_str()) : 0;
  if (version <= 0) {
    return Damaged("is an SQLite database without bulkhead's schema (no meta.schema_version)",
                   std::string(kNotAStoreTodo) + "; if a new, empty store is intended, delete " +
                       path_ + " and start again");
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

  s = SetJournal();
  if (!s.ok()) return s;
  s = UpgradeSchema(version);
  if (!s.ok()) return s;
  s = stmts_.Prepare(db_);
  if (!s.ok()) return s;
  return ReplayRedo(meta.contains("redo_seq") ? std::atoll(meta["redo_seq"].c_str()) : 0);
}

Status SqliteChangeLog::CheckOrCreateFile() {
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
  return Status::Ok();
}

Status SqliteChangeLog::ReadMeta(std::map<std::string, std::string>& meta) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT key, value FROM meta", -1, &st, nullptr) != SQLITE_OK) {
    std::string err = sqlite3_errmsg(db_);
    int code = sqlite3_errcode(db_);
    if (code == SQLITE_NOTADB) {
      return Damaged("is not a bulkhead store (SQLite: " + err + ")", kNotAStoreTodo);
    }
    if (code == SQLITE_CORRUPT) {
      return Damaged("is damaged (SQLite: " + err + ")", RestoreOrRecoverTodo());
    }
    return Damaged("is an SQLite database without bulkhead's tables (" + err + ")",
                   std::string(kNotAStoreTodo) + "; if a new, empty store is intended, delete " +
                       path_ + " and start again");
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    meta[ColumnText(st, 0)] = ColumnText(st, 1);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    return Damaged("is damaged (SQLite: " + std::string(sqlite3_errmsg(db_)) + ")",
                   RestoreOrRecoverTodo());
  }
  return Status::Ok();
}

Status SqliteChangeLog::SetJournal() {
  Status s = SqliteExec(db_, path_, "PRAGMA journal_mode=WAL");
  if (!s.ok()) return s;
  s = SqliteExec(db_, path_,
                 durability_ == "power" ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  if (!s.ok()) return s;
  // A small WAL: checkpoint every kWalAutocheckpointPages pages and cut the file back to
  // kWalSizeLimitBytes when it restarts, so that recent commits do not pile up in a WAL the size of
  // the backlog (a restart after a full disk needs room for the WAL and what it checkpoints).
  // They bound the file only: when SQLite refuses one, the store still works.
  for (const std::string& pragma :
       {"PRAGMA wal_autocheckpoint=" + std::to_string(kWalAutocheckpointPages),
        "PRAGMA journal_size_limit=" + std::to_string(kWalSizeLimitBytes)}) {
    if (Status t = SqliteExec(db_, path_, pragma.c_str()); !t.ok()) {
      spdlog::warn("sqlite store {}: {}", path_, t.message());
    }
  }
  return Status::Ok();
}

Status SqliteChangeLog::UpgradeSchema(int version) {
  Status s = SqliteExec(db_, path_, kSqliteSchema);
  if (!s.ok()) return s;
  for (int v = version; v < kSchemaVersion; ++v) {
    std::string step = std::string("BEGIN; ") + kSqliteUpgrades[v - 1] +
                       " UPDATE meta SET value='" + std::to_string(v + 1) +
                       "' WHERE key='schema_version'; COMMIT;";
    s = SqliteExec(db_, path_, step.c_str());
    if (!s.ok()) {
      SqliteExec(db_, path_,
                 "ROLLBACK");  // its own error adds nothing: Load fails and closes the file
      return Status(s.code(), "upgrading " + path_ + " from schema version " + std::to_string(v) +
                                  ": " + s.message());
    }
    spdlog::info("sqlite store {}: upgraded from schema version {} to {}", path_, v, v + 1);
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
      std::string line = ColumnText(st, 0);
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
                   RestoreOrRecoverTodo());
  }
  spdlog::info("sqlite store {}: the last stop was not clean; quick_check passed in {} ms", path_,
               ms);
  return Status::Ok();
}

}  // namespace bulkhead
