// StoreBackup: a consistent copy of a running store's file, written while the store keeps serving
// (`bulkhead backup`, server/backup_api.h). Only a store that keeps a file of its own has one:
// Store::backup() is null for memory: (nothing on disk) and Redis (back up Redis itself: BGSAVE
// or AOF, docs/operations.md "Backups").
//
// Contract: Backup is called on the event loop; `progress` and `done` run on it too. `done` runs
// exactly once: inline for a request refused at once (bad path, a backup already running), else
// after the copy is complete and in place, or failed (the partial file removed). At most one
// backup runs at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct BackupProgress {
  int64_t pages_done = 0;   // pages copied so far
  int64_t pages_total = 0;  // pages in the store now (it may grow while the copy runs)
};

struct BackupResult {
  std::string path;   // where the copy is
  int64_t bytes = 0;  // its size
  int64_t pages = 0;  // pages copied
};

class StoreBackup {
 public:
  using ProgressCallback = std::function<void(const BackupProgress&)>;
  using DoneCallback = std::function<void(Result<BackupResult>)>;

  virtual ~StoreBackup() = default;

  // Writes a copy of the store to `path` (absolute; an earlier backup there, an SQLite file, is
  // replaced, any other file is refused): into a
  // temporary file beside it, mode 0600 (the store holds signing keys), synced, then renamed over
  // `path`, so `path` is always either the previous file or the complete copy. Errors:
  // InvalidArgument naming the path and the problem (relative, no such directory, a directory,
  // the store's own files, a file that is not an SQLite database), FailedPrecondition while another
  // backup runs, Unavailable for I/O.
  virtual void Backup(const std::string& path, ProgressCallback progress, DoneCallback done) = 0;
};

}  // namespace bulkhead
