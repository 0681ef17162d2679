// SqliteChangeLog: the durable half of the `sqlite:` store. Changes are appended from the event
// loop and committed by one writer thread; everything appended while a commit runs goes into the
// next transaction (group commit), so concurrent pushes, acks and fails share one transaction.
//
// Durability: WAL mode. "process" durability (default) uses synchronous=NORMAL: a committed
// transaction is in the WAL file before `durable` callbacks run, so it survives kill -9 of the
// server; a power loss or kernel crash may lose the transactions since the last checkpoint.
// "power" uses synchronous=FULL: the WAL is fsynced at every commit (slower; survives power loss).
//
// Format: see kSchemaVersion and the upgrade notes in sqlite_change_log.cc.
//
// Thread-safety: Append may be called from any thread; Load and Close from the owner only.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bulkhead/store/change_log.h"
#include "bulkhead/store/store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bulkhead {

class SqliteChangeLog final : public ChangeLog {
 public:
  // `path`: database file (created with its directory if missing). `poster` runs durable
  // callbacks on the event loop.
  SqliteChangeLog(std::string path, Store::Poster poster, std::string durability);
  ~SqliteChangeLog() override;

  Status Load(MemoryState& state) override;
  void Append(std::vector<Change> changes, std::function<void(Status)> durable) override;
  void Close() override;

  static constexpr int kSchemaVersion = 3;

 private:
  struct Pending {
    std::vector<Change> changes;
    std::function<void(Status)> durable;
  };

  Status OpenDatabase();
  Status Exec(const char* sql);
  Status Prepare(const char* sql, sqlite3_stmt** stmt);
  void WriterLoop();
  // Runs one transaction over `batch`; returns its Status.
  Status CommitBatch(std::vector<Pending>& batch);
  Status ApplyChange(const Change& c, std::map<std::string, int64_t>& counter_deltas);

  const std::string path_;
  const Store::Poster poster_;
  const std::string durability_;

  // Used by the writer thread only (and by Load before the thread starts).
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* update_ = nullptr;
  sqlite3_stmt* update_state_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
  sqlite3_stmt* counter_ = nullptr;
  sqlite3_stmt* pause_ = nullptr;
  sqlite3_stmt* unpause_ = nullptr;
  sqlite3_stmt* put_key_ = nullptr;
  sqlite3_stmt* delete_key_ = nullptr;
  sqlite3_stmt* put_host_ = nullptr;
  sqlite3_stmt* delete_host_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending> pending_;  // guarded by mu_
  bool stopping_ = false;         // guarded by mu_
  std::thread writer_;
};

}  // namespace bulkhead
