// SqliteBackup: the `sqlite:` store's online backup (StoreBackup), with SQLite's online backup API
// (https://www.sqlite.org/backup.html: sqlite3_backup_init / _step / _finish).
//
// Where it runs: on the store's writer thread, with the writer's own connection, between its
// commits (SqliteChangeLog::RunOnWriter). It cannot use a connection of its own: the store holds
// its file with PRAGMA locking_mode=EXCLUSIVE, so no other connection may even read it while the
// server runs. Each step copies kPagesPerStep pages (4 MiB with 4 KiB pages, a few milliseconds)
// more than the source grew during the step before, then the writer commits whatever was appended
// meanwhile before the next step: the event loop never waits (a change logged in the redo log is
// answered without its commit), and the copy gains kPagesPerStep pages a step on a store that
// grows under load, so it finishes.
//
// What the copy holds: SQLite updates a backup in progress with every change written through the
// connection it copies from (sqlite3_backup_step: "If the source database is modified by using
// the same database connection as is used by the backup operation, then the backup database is
// automatically updated at the same time"), so the copy is the store as of the last commit before
// the final step. Every PUSH answered +OK before the backup started is in it; one answered during
// the backup may or may not be.
//
// The copy is written to PATH.tmp (mode 0600) with no journal (a crash leaves only that file,
// which the next backup to PATH truncates), synced, then renamed over PATH (durable_file.h).
#pragma once

#include <memory>
#include <string>

#include "bulkhead/store/store.h"
#include "bulkhead/store/store_backup.h"

struct sqlite3;

namespace bulkhead {

// A task of the writer thread (SqliteChangeLog::RunOnWriter): called with the writer's connection
// between commits until it returns true; `stopping` on its last call, at Close (then `db` may be
// null and the task only cleans up).
using SqliteWriterTask = std::function<bool(sqlite3* db, bool stopping)>;

class SqliteBackup final : public StoreBackup {
 public:
  static constexpr int kPagesPerStep = 1024;

  // `store_path`: the store's file (refused as a target, with its -wal, -commits and -redo side
  // files).
  // `run_on_writer` hands a task to the writer thread; `poster` runs callbacks on the event loop.
  SqliteBackup(std::string store_path, std::function<void(SqliteWriterTask)> run_on_writer,
               Store::Poster poster);

  void Backup(const std::string& path, ProgressCallback progress, DoneCallback done) override;

 private:
  // InvalidArgument naming `path` when it cannot be a backup's target.
  Status CheckTarget(const std::string& path) const;

  const std::string store_path_;
  const std::function<void(SqliteWriterTask)> run_on_writer_;
  const Store::Poster poster_;
  // True while a backup runs; read and written on the event loop only (shared with the posted
  // completion, which may outlive this object at shutdown).
  std::shared_ptr<bool> running_ = std::make_shared<bool>(false);
};

}  // namespace bulkhead
