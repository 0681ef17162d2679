// EmbeddedContext: what EmbeddedStore shares with its parts (embedded_<part>.h): the state in
// memory, the change log that makes it durable, and the steps every change takes there: refused
// while degraded (embedded_store.h), applied to MemoryState, appended to the log, answered once
// durable. Internal to the embedded store; one per EmbeddedStore, which outlives its parts.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bulkhead/store/change_log.h"
#include "bulkhead/store/memory_state.h"
#include "bulkhead/store/queue_throttle.h"
#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class EmbeddedContext : public StoreCallbacks {
 public:
  // `log` may be null (memory only).
  explicit EmbeddedContext(std::unique_ptr<ChangeLog> log);

  MemoryState& state() { return state_; }
  size_t cold_jobs() const { return state_.cold_jobs(); }
  // The log (null for memory:).
  ChangeLog* log() { return log_.get(); }
  // Loads the log into the state (EmbeddedStore::Open); closes the log (idempotent).
  Status Load();
  void Close();

  bool degraded() const;
  std::string degraded_reason() const;
  // Ok, or the Unavailable status every change is refused with while degraded.
  Status Writable() const;
  // While degraded: answers `cb` (if set) with that refusal and returns true.
  template <typename Callback>
  bool Refused(const Callback& cb) const {
    if (!degraded()) return false;
    if (cb) cb(Writable());
    return true;
  }
  // Hands `changes` to the log; `durable` runs after the commit (inline when there is no log or
  // nothing changed).
  void Commit(std::vector<Change> changes, std::function<void(Status)> durable);
  // Runs `change` (a MemoryState mutation filling the changes: Status(std::vector<Change>&))
  // unless degraded, then commits; `durable` gets the refusal, change's error, or the commit's.
  template <typename ChangeFn>
  void Apply(Done durable, ChangeFn&& change) {
    if (Refused(durable)) return;
    std::vector<Change> changes;
    Status s = change(changes);
    if (!s.ok()) {
      if (durable) durable(s);
      return;
    }
    Commit(std::move(changes), std::move(durable));
  }
  // Appends the processed/failures counter changes (total and the day of `now`) to `changes`.
  void AddOutcome(int64_t processed, int64_t failures, TimePoint now, std::vector<Change>& changes);
  // Store::Fetch, Store::FetchFor and ThrottleStore::Fetch (throttled null: no throttles): the
  // reservation, its holder (when `holder` is not empty) and, for a followed job, its tracking
  // state (working) in one change.
  // A job fetched cold (compaction: memory_state.h) is answered once its payload is read back on
  // the log's thread; `cb` runs later then. A row that comes back not stored (damaged, moved
  // aside) is dropped and the FETCH takes the next job instead.
  void Fetch(const std::vector<std::string>& queues, const ThrottledFetch* throttled,
             const std::string& holder, TimePoint now, JobCallback cb);
  // Runs `read` (a read that may return reserved jobs) once every fetched job's payload is back:
  // inline when no FETCH waits for a row, else after the reads in flight answer (in call order).
  void AfterLoads(std::function<void()> read);
  // Store::FindJob: a hot job from memory, a cold one read from its row on the log's thread.
  void FindJob(const std::string& jid, JobCallback cb);

 private:
  std::unique_ptr<ChangeLog> log_;
  MemoryState state_;
  // A FETCH waiting for its job's row: what it asked, so that it can take the next job when the
  // row comes back not stored (set aside as damaged on the log's thread: SqliteChangeLog).
  struct Waiter {
    JobCallback cb;
    std::string jid;
    std::vector<std::string> queues;
    std::optional<ThrottledFetch> throttled;
    std::string holder;
    TimePoint now;
  };
  std::unordered_map<int64_t, Waiter> waiting_;
  std::unordered_set<int64_t> reading_;  // the rows of the reads in flight
  // Answers FETCHes from the rows of a read (or its error) and warms the rows read ahead.
  void RowsRead(const std::vector<int64_t>& ids,
                Result<std::vector<std::optional<JobRecord>>> rows);
  // A cold row the log answered as not stored (set aside as damaged, or gone): forgets its job
  // in memory too, and in the file, unless the jid names another row since
  // (MemoryState::RemoveRow).
  void ForgetSetAside(const std::string& jid, int64_t id);
  // Held while the context lives: closures the log posts back check it before touching state_.
  std::shared_ptr<int> life_ = std::make_shared<int>(0);
  bool closed_ = false;
  // The UTC day number (since the epoch) of the last AddOutcome and that day's counter names
  // ("processed:YYYY-MM-DD", "failures:YYYY-MM-DD"): made once a day, not once a job.
  int64_t counted_day_number_ = -1;
  std::string processed_today_;
  std::string failures_today_;
};

}  // namespace bulkhead
