// ChangeLog: where an embedded store makes its changes durable. MemoryState decides what changes;
// a ChangeLog persists the resulting rows and tells when they are safe.
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "bulkhead/store/change.h"
#include "bulkhead/store/memory_state.h"
#include "bulkhead/store/store_backup.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class ChangeLog {
 public:
  virtual ~ChangeLog() = default;
  // Fills `state` with everything persisted. Called once, before any Append.
  virtual Status Load(MemoryState& state) = 0;
  // Queues `changes` (in order, after all earlier ones). `durable` (may be empty) runs on the event
  // loop once they are committed, with the commit's Status. Thread-safe.
  virtual void Append(std::vector<Change> changes, std::function<void(Status)> durable) = 0;
  // Ok until a commit fails; from then on, for the life of the log, a Status naming that first
  // failure (the file and the database's error). A log that failed writes nothing more: every
  // later Append is answered with this Status, so the file holds exactly the changes committed
  // before the failure. Thread-safe (a store checks it before every change).
  virtual Status failure() const = 0;
  // Reads the stored rows `ids` on the log's thread, after every change appended before (so a row
  // reads as the last change to it left it); `done` runs on the event loop with one entry per id,
  // nullopt for a row that is not stored, or the error. An empty `ids` only waits for the reads
  // asked before (their answers come first). Thread-safe. How the sqlite: store reads a cold job's
  // payload (memory_state.h, queue_slot.h) without blocking the event loop.
  using ReadDone = std::function<void(Result<std::vector<std::optional<JobRecord>>>)>;
  virtual void ReadJobs(std::vector<int64_t> ids, ReadDone done) = 0;
  // ReadJobs for rows no answer waits for yet (read ahead of FETCH): answers of changes appended
  // after it need not wait for its own (reads still answer in call order among themselves). A
  // log that keeps no answer waiting reads them as ReadJobs does.
  virtual void ReadAhead(std::vector<int64_t> ids, ReadDone done) {
    ReadJobs(std::move(ids), std::move(done));
  }
  // Commits what is queued and stops. Idempotent.
  virtual void Close() = 0;
  // Online backups of the log's file (store_backup.h); null when it has none.
  virtual StoreBackup* backup() { return nullptr; }
};

}  // namespace bulkhead
