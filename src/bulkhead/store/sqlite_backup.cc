#include "bulkhead/store/sqlite_backup.h"

#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "bulkhead/store/durable_file.h"

namespace bulkhead {
namespace {

// One backup in progress: owned by its writer task, which runs on the writer thread only.
class BackupRun {
 public:
  BackupRun(std::string path, StoreBackup::ProgressCallback progress,
            StoreBackup::DoneCallback done, Store::Poster poster, std::shared_ptr<bool> running)
      : path_(std::move(path)),
        tmp_(path_ + ".tmp"),
        progress_(std::move(progress)),
        done_(std::move(done)),
        poster_(std::move(poster)),
        running_(std::move(running)) {}
  ~BackupRun() { Release(); }

  const std::string& tmp() const { return tmp_; }

  // One step; true once finished (done_ posted).
  bool Step(sqlite3* db, bool stopping) {
    if (stopping || db == nullptr) {
      return Fail(Status::Unavailable("the server stopped before the backup to " + path_ +
                                      " was complete"));
    }
    if (backup_ == nullptr) {
      Status s = Start(db);
      if (!s.ok()) return Fail(s);
    }
    // kPagesPerStep more than the source grew during the step before (new pages appended between
    // steps are copied too): a fixed number a step never caught up with a store that grows
    // faster under load. The writer commits what the loop appends between steps, so the copy
    // outpaces the growth by kPagesPerStep a step and finishes.
    int rc = sqlite3_backup_step(backup_, SqliteBackup::kPagesPerStep + grown_);
    const int total = sqlite3_backup_pagecount(backup_);
    grown_ = last_total_ > 0 ? std::max(0, total - last_total_) : 0;
    last_total_ = total;
    BackupProgress p{total - sqlite3_backup_remaining(backup_), total};
    if (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      poster_([progress = progress_, p] {
        if (progress) progress(p);
      });
      return false;
    }
    if (rc != SQLITE_DONE) return Fail(Error("copying into", rc));
    rc = sqlite3_backup_finish(backup_);
    backup_ = nullptr;
    if (rc != SQLITE_OK) return Fail(Error("finishing", rc));
    return Complete(p.pages_total);
  }

 private:
  Status Start(sqlite3* db) {
    if (sqlite3_open_v2(tmp_.c_str(), &dest_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      return Error("opening", sqlite3_errcode(dest_));
    }
    // No journal: the file is a temporary one until it is complete and renamed.
    if (sqlite3_exec(dest_, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", nullptr, nullptr,
                     nullptr) != SQLITE_OK) {
      return Error("setting up", sqlite3_errcode(dest_));
    }
    backup_ = sqlite3_backup_init(dest_, "main", db, "main");
    if (backup_ == nullptr) return Error("starting the copy into", sqlite3_errcode(dest_));
    return Status::Ok();
  }

  Status Error(const char* doing, int rc) const {
    // The step's own code first: the destination's message may be "not an error" when the
    // source failed the step.
    std::string message = sqlite3_errstr(rc);
    if (dest_ != nullptr && sqlite3_errcode(dest_) != SQLITE_OK) {
      message += std::string(" (") + sqlite3_errmsg(dest_) + ")";
    }
    return Status::Unavailable("backup: " + std::string(doing) + " " + tmp_ +
                               " failed: " + message);
  }

  bool Complete(int64_t pages) {
    sqlite3_close(dest_);
    dest_ = nullptr;
    Status s = SyncFile(tmp_);
    if (s.ok()) s = DurableRename(tmp_, path_);
    if (!s.ok()) return Fail(s);
    struct stat st {};
    ::stat(path_.c_str(), &st);
    Finish(BackupResult{path_, static_cast<int64_t>(st.st_size), pages});
    return true;
  }

  bool Fail(Status s) {
    Release();
    ::unlink(tmp_.c_str());
    spdlog::warn("backup to {} failed: {}", path_, s.message());
    Finish(std::move(s));
    return true;
  }

  void Finish(Result<BackupResult> r) {
    poster_([done = done_, running = running_, r = std::move(r)]() mutable {
      *running = false;
      done(std::move(r));
    });
  }

  void Release() {
    if (backup_ != nullptr) sqlite3_backup_finish(backup_);
    backup_ = nullptr;
    if (dest_ != nullptr) sqlite3_close(dest_);
    dest_ = nullptr;
  }

  const std::string path_;
  const std::string tmp_;
  const StoreBackup::ProgressCallback progress_;
  const StoreBackup::DoneCallback done_;
  const Store::Poster poster_;
  const std::shared_ptr<bool> running_;
  sqlite3* dest_ = nullptr;
  sqlite3_backup* backup_ = nullptr;
  int last_total_ = 0;  // the source's pages at the last step
  int grown_ = 0;       // how many it grew by between the last two steps
};

// True when `path` starts with the SQLite header string ("SQLite format 3\0",
// https://www.sqlite.org/fileformat2.html#the_database_header), or is empty (a backup's
// temporary file that SQLite had not written yet).
bool IsSqliteFile(const std::string& path) {
  static constexpr char kHeader[] = "SQLite format 3";  // with its terminating NUL: 16 bytes
  std::ifstream in(path, std::ios::binary);
  char head[sizeof(kHeader)] = {};
  in.read(head, sizeof(head));
  if (in.gcount() == 0) return in.eof();
  return in.gcount() == sizeof(head) && std::memcmp(head, kHeader, sizeof(head)) == 0;
}

}  // namespace

SqliteBackup::SqliteBackup(std::string store_path,
                           std::function<void(SqliteWriterTask)> run_on_writer,
                           Store::Poster poster)
    : store_path_(std::move(store_path)),
      run_on_writer_(std::move(run_on_writer)),
      poster_(std::move(poster)) {}

Status SqliteBackup::CheckTarget(const std::string& path) const {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("backup path " + path + ": " + why);
  };
  if (path.empty()) return Status::InvalidArgument("backup path is empty");
  std::filesystem::path p(path);
  if (!p.is_absolute()) return bad("not an absolute path");
  if (!p.has_filename()) return bad("names a directory: name the backup file");
  std::string dir = p.parent_path().string();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return bad("its directory " + dir + " cannot be used: " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return bad(dir + " is not a directory");
  // Before the content check: the store's WAL (not an SQLite database) holds frames at rest.
  for (const char* suffix : {"", "-wal", "-commits", "-redo"}) {
    if (SameFile(path, store_path_ + suffix) ||
        std::filesystem::weakly_canonical(p) ==
            std::filesystem::weakly_canonical(store_path_ + suffix)) {
      return bad("is the store's own file: back up to another file");
    }
  }
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return bad("is a directory: name the backup file");
    // Only an earlier backup is replaced, never another file the server could write (its
    // config, its keys).
    if (!IsSqliteFile(path)) {
      return bad("exists and is not an SQLite database: refusing to replace it (remove it first)");
    }
  }
  return Status::Ok();
}

void SqliteBackup::Backup(const std::string& path, ProgressCallback progress, DoneCallback done) {
  if (*running_) {
    done(Status::FailedPrecondition("a backup is already running: wait for it to finish"));
    return;
  }
  Status s = CheckTarget(path);
  // The temporary file is created here, so that a directory the server may not write to is
  // named at once.
  auto run = std::make_shared<BackupRun>(path, std::move(progress), done, poster_, running_);
  if (s.ok()) s = CreatePrivateFile(run->tmp());
  if (!s.ok()) {
    done(std::move(s));
    return;
  }
  *running_ = true;
  spdlog::info("backup of {} to {} started", store_path_, path);
  run_on_writer_([run](sqlite3* db, bool stopping) { return run->Step(db, stopping); });
}

}  // namespace bulkhead
