#include "bulkhead/store/sqlite_restore.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "bulkhead/store/durable_file.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/sqlite_db.h"

namespace bulkhead {
namespace {

// SQLite's lock bytes (the lock-byte page): PENDING_BYTE, RESERVED_BYTE and the SHARED range.
constexpr off_t kLockBytesStart = 0x40000000;
constexpr off_t kLockBytesLength = 512;

Status InUse(const std::string& store_path, int64_t holder) {
  return Status::FailedPrecondition(
      "the store " + store_path + " is in use: process " + std::to_string(holder) +
      " (a running bulkhead server) holds it; stop the server first, then restore (a backup of "
      "a running server is `bulkhead backup PATH`)");
}

// The write lock a server would need on the store's lock bytes, held from the check that no
// server has the store until the restored copy is in place: a server starting meanwhile cannot
// take the store (it waits, then finds its file replaced: sqlite_change_log_open.cc).
class RestoreLock {
 public:
  ~RestoreLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  // OK and held, or nothing to hold (no store yet); FailedPrecondition when a process holds it.
  Status Take(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
      if (errno == ENOENT) return Status::Ok();
      return Status::Unavailable("cannot open " + path + " to lock it: " + std::strerror(errno));
    }
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = kLockBytesStart;
    lock.l_len = kLockBytesLength;
    if (::fcntl(fd_, F_SETLK, &lock) == 0) return Status::Ok();
    if (errno != EACCES && errno != EAGAIN) {
      return Status::Unavailable("cannot lock " + path + ": " + std::strerror(errno));
    }
    Result<int64_t> holder = StoreLockHolder(path);
    return InUse(path, holder.ok() ? *holder : 0);
  }

 private:
  int fd_ = -1;
};

Status CopyFile(const std::string& from, const std::string& to) {
  Status s = CreatePrivateFile(to);
  if (!s.ok()) return s;
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);  // keeps the 0600 mode
  if (!in) return Status::InvalidArgument("cannot read the backup " + from);
  out << in.rdbuf();
  out.flush();
  if (!out) return Status::Unavailable("cannot write " + to + " (disk full?)");
  out.close();
  return SyncFile(to);
}

// One integer from `sql` (its first column of its first row).
Result<int64_t> QueryInt(sqlite3* db, const std::string& path, const char* sql) {
  int64_t value = 0;
  Status s = SqliteForEachRow(db, path, sql,
                              [&](sqlite3_stmt* st) { value = sqlite3_column_int64(st, 0); });
  if (!s.ok()) return s;
  return value;
}

// The checks of step 2 on the copy at `path` (open as `db`); `backup` names the file for errors.
Status CheckCopy(sqlite3* db, const std::string& path, const std::string& backup,
                 RestoreReport& report) {
  auto damaged = [&](const std::string& why) {
    return Status::FailedPrecondition("the backup " + backup + " " + why +
                                      ": nothing was restored");
  };
  std::string check;
  Status s = SqliteForEachRow(db, path, "PRAGMA integrity_check", [&](sqlite3_stmt* st) {
    if (check.size() < 400) check += (check.empty() ? "" : "; ") + ColumnText(st, 0);
  });
  if (!s.ok()) return damaged("cannot be read as an SQLite database (" + s.message() + ")");
  if (check != "ok") return damaged("fails PRAGMA integrity_check: " + check);
  std::string version;
  s = SqliteForEachRow(db, path, "SELECT value FROM meta WHERE key='schema_version'",
                       [&](sqlite3_stmt* st) { version = ColumnText(st, 0); });
  if (!s.ok() || version.empty())
    return damaged("is not a bulkhead store (no meta.schema_version)");
  report.schema_version = std::atoi(version.c_str());
  if (report.schema_version < 1 || report.schema_version > SqliteChangeLog::kSchemaVersion) {
    return damaged("has schema version " + version + ", and this bulkhead knows versions 1 to " +
                   std::to_string(SqliteChangeLog::kSchemaVersion) +
                   ": restore it with the bulkhead release that wrote it");
  }
  s = SqliteForEachRow(
      db, path, "SELECT state, count(*) FROM jobs GROUP BY state", [&](sqlite3_stmt* st) {
        int state = sqlite3_column_int(st, 0);
        std::string name = state >= 0 && state <= 4 ? JobStateName(static_cast<JobState>(state))
                                                    : "state " + std::to_string(state);
        report.jobs[name] += sqlite3_column_int64(st, 1);
      });
  if (!s.ok()) return damaged("has no readable jobs table (" + s.message() + ")");
  Result<int64_t> keys = QueryInt(db, path, "SELECT count(*) FROM signing_keys");
  Result<int64_t> hosts = QueryInt(db, path, "SELECT count(*) FROM host_states");
  if (!keys.ok() || !hosts.ok()) return damaged("lacks bulkhead's tables");
  report.signing_keys = *keys;
  report.host_states = *hosts;
  // The server sets its journal mode at open; DELETE here folds everything into the one file.
  return SqliteExec(db, path, "PRAGMA journal_mode=DELETE");
}

// Opens the copy at `path` (no shared memory: locking_mode=EXCLUSIVE, as the server) and checks it.
Status OpenAndCheck(const std::string& path, const std::string& backup, RestoreReport& report) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, sqlite3_close);
  if (rc != SQLITE_OK) {
    return Status::FailedPrecondition("the backup " + backup +
                                      " cannot be opened: " + sqlite3_errmsg(raw));
  }
  Status s = SqliteExec(raw, path, "PRAGMA locking_mode=EXCLUSIVE");
  if (s.ok()) s = CheckCopy(raw, path, backup, report);
  return s;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Step 3: the store at `store` and its side files moved to STORE.before-restore*.
Result<std::string> MoveAside(const std::string& store) {
  if (!Exists(store)) return std::string();
  const std::string kept = store + ".before-restore";
  for (const char* suffix : {"", "-wal", "-commits", "-redo"}) {
    const std::string from = store + suffix;
    const std::string to = kept + suffix;
    if (Exists(from)) {
      Status s = DurableRename(from, to);
      if (!s.ok()) return s;
    } else {
      ::unlink(to.c_str());  // an earlier restore's: it does not belong to the file kept now
    }
  }
  ::unlink((store + "-shm").c_str());
  return kept;
}

}  // namespace

Result<int64_t> StoreLockHolder(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return int64_t{0};
    return Status::Unavailable("cannot open " + path +
                               " to check its lock: " + std::strerror(errno));
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = kLockBytesStart;
  lock.l_len = kLockBytesLength;
  int rc = ::fcntl(fd, F_GETLK, &lock);
  int err = errno;
  ::close(fd);
  if (rc != 0) {
    return Status::Unavailable("cannot check the lock of " + path + ": " + std::strerror(err));
  }
  return lock.l_type == F_UNLCK ? int64_t{0} : int64_t{lock.l_pid};
}

Result<RestoreReport> RestoreSqliteStore(const std::string& backup, const std::string& store_path) {
  struct stat st {};
  if (::stat(backup.c_str(), &st) != 0) {
    return Status::InvalidArgument("the backup " + backup +
                                   " cannot be read: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    return Status::InvalidArgument("the backup " + backup + " is not a file");
  if (SameFile(backup, store_path)) {
    return Status::InvalidArgument("the backup " + backup + " is the store's own file");
  }
  // Refused while a server holds the store (named by Take); held until the copy is in place.
  RestoreLock lock;
  if (Status s = lock.Take(store_path); !s.ok()) return s;
  if (auto dir = std::filesystem::path(store_path).parent_path(); !dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);  // a new machine's data directory
  }
  RestoreReport report;
  const std::string copy = store_path + ".restore";
  Status s = CopyFile(backup, copy);
  if (s.ok()) s = OpenAndCheck(copy, backup, report);
  if (s.ok()) s = SyncFile(copy);
  if (!s.ok()) {
    for (const char* suffix : {"", "-journal", "-wal"}) ::unlink((copy + suffix).c_str());
    return s;
  }
  Result<std::string> kept = MoveAside(store_path);
  if (!kept.ok()) return kept.status();
  report.kept = *kept;
  s = DurableRename(copy, store_path);
  if (!s.ok()) return s;
  report.bytes = ::stat(store_path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
  return report;
}

}  // namespace bulkhead
