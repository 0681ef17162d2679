// EmbeddedStore: the in-process Store — state in memory (MemoryState), made durable by an optional
// ChangeLog. Without a log it is the `memory:` store (nothing survives a restart); with a
// SqliteChangeLog it is the default `sqlite:` store.
//
// Reads and state changes happen inline on the calling thread (the event loop), so a FETCH costs a
// hash lookup and a deque pop; only `durable` callbacks wait, for the log's group commit.
//
// Degraded mode (Store::degraded()). A change is applied to memory first and committed later, so
// a failed commit (disk full, I/O error) leaves memory ahead of the file. The store never goes on
// as if nothing happened:
// 1. The log reports the failure (ChangeLog::failure(), sticky) and writes nothing more; the
//    first failure is logged at error level with the database's message.
// 2. Every later call that changes state is refused with Unavailable("store degraded: ...")
//    before it touches memory (FETCH too: it reserves, so a degraded store hands out no job).
//    Reads keep working so that operators can look. Only a restart leaves degraded mode.
// 3. The changes of the failed batch itself, and of any batch appended before the failure was
//    seen, stay in memory but are not on disk: their `durable` callbacks get the error (the PUSH
//    or ACK is answered -ERR) and they are lost at restart, which reloads the file. A job whose
//    PUSH failed is therefore never run once the store is degraded. It can have been run only if
//    a FETCH took it in the few milliseconds its commit was in flight (FETCH does not wait for
//    the commit of what it hands out; see Store::Fetch).
// A store without a log (memory:) is never degraded.
#pragma once

#include <memory>
#include <string>

#include "bulkhead/store/change_log.h"
#include "bulkhead/store/embedded_taken_marks.h"
#include "bulkhead/store/memory_state.h"
#include "bulkhead/store/store.h"

namespace bulkhead {

class EmbeddedStore final : public Store {
 public:
  // `log` may be null (memory only).
  EmbeddedStore(std::string name, std::unique_ptr<ChangeLog> log);
  ~EmbeddedStore() override;

  std::string_view Name() const override { return name_; }
  bool degraded() const override;
  std::string degraded_reason() const override;
  Status Open() override;
  void Close() override;

  void Push(JobRecord job, Done durable) override;
  void Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) override;
  void FetchFor(const std::vector<std::string>& queues, const std::string& wid, TimePoint now,
                JobCallback cb) override;
  void Ack(const std::string& jid, TimePoint now, JobCallback durable) override;
  void GetWorking(const std::string& jid, JobCallback cb) override;
  void ExtendReservation(const std::string& jid, TimePoint until, Done durable) override;
  void FailReserved(const std::string& jid, TimePoint reserved_until, std::optional<JobRecord> next,
                    bool count_failure, TimePoint now, Done durable) override;
  void Move(JobRecord job, TimePoint now, Done durable) override;
  void Remove(const std::string& jid, Done durable) override;
  void EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) override;
  void ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) override;
  void PurgeDead(TimePoint now, size_t limit, CountCallback cb) override;
  void Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
              Duration dead_ttl, CountCallback durable) override;
  void SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) override;
  void RemoveQueues(const std::vector<std::string>& queues, Done durable) override;
  void CountOutcome(int64_t processed, int64_t failures, TimePoint now) override;
  void Flush(Done durable) override;
  void PutSigningKey(const std::string& key_id, const std::string& pem, Done durable) override;
  void RemoveSigningKey(const std::string& key_id, Done durable) override;
  void ListSigningKeys(SigningKeysCallback cb) override;
  void PutHostState(const HostStateRecord& record, Done durable) override;
  void RemoveHostState(const std::string& host, Done durable) override;
  void ListHostStates(HostStatesCallback cb) override;
  void Stats(std::function<void(Result<StoreStats>)> cb) override;
  void List(JobState set, size_t offset, size_t limit, JobsCallback cb) override;

  // Queue throttling. Slots live in memory beside the working set; after a restart every
  // stored reservation holds a slot again (see store/throttle_slots.h).
  void FetchThrottled(const std::vector<std::string>& queues, const ThrottledFetch& throttled,
                      TimePoint now, JobCallback cb) override;
  void ThrottleUses(const std::vector<QueueThrottle>& throttles, TimePoint now,
                    ThrottleUsesCallback cb) override;
  // Unique jobs and cron (embedded_store_unique.cc).
  void PushUnique(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) override;
  void ReleaseUniqueLock(const std::string& jid, Done durable) override;
  void ClaimCronFiring(const std::string& entry, TimePoint due, ClaimCallback durable) override;
  void ListCronFirings(CronFiringsCallback cb) override;
  // Batches.
  void BatchNew(BatchRecord batch, TimePoint now, Done durable) override;
  void BatchGet(const std::string& bid, TimePoint now, BatchCallback cb) override;
  void BatchCommit(const std::string& bid, TimePoint now, Done durable) override;
  void PushBatchMember(JobRecord job, const std::string& bid, TimePoint now, Done durable) override;
  void ExpireBatches(TimePoint now, size_t limit, CountCallback cb) override;
  void GetBatchCounts(std::function<void(Result<BatchCounts>)> cb) override;
  // Tracking.
  void TrackSet(TrackUpdate update, TimePoint now, Done durable) override;
  void TrackPushed(const std::string& jid, TimePoint now, Done durable) override;
  void TrackGet(const std::string& jid, TimePoint now, TrackCallback cb) override;
  void ExpireTracks(TimePoint now, size_t limit, CountCallback cb) override;
  // Job lookup by jid and reservation holders (embedded_store_lookup.cc): MemoryState's holder
  // records, made durable by the log as records of space "holder".
  void FindJob(const std::string& jid, JobCallback cb) override;
  void SetHolder(const std::string& jid, const std::string& wid, Done durable) override;
  void ListHeld(size_t limit, HeldJobsCallback cb) override;
  // Marks of jobs taken from elsewhere (embedded_taken_marks.h).
  TakenMarks& taken_marks() override { return taken_marks_; }

 private:
  // Runs `change` (a MemoryState mutation filling the changes) unless degraded, then commits.
  void Apply(const Done& durable, const std::function<Status(std::vector<Change>&)>& change);
  // Ok, or the Unavailable status every change is refused with while degraded.
  Status Writable() const;
  // Hands `changes` to the log; `durable` runs after the commit (inline when there is no log or
  // nothing changed).
  void Commit(std::vector<Change> changes, std::function<void(Status)> durable);
  // Fetch, FetchFor and FetchThrottled (throttled null: no throttles): the reservation, its
  // holder (when `holder` is not empty) and, for a followed job, its tracking state (working) in
  // one change.
  void FetchUnder(const std::vector<std::string>& queues, const ThrottledFetch* throttled,
                  const std::string& holder, TimePoint now, JobCallback cb);

  const std::string name_;
  std::unique_ptr<ChangeLog> log_;
  MemoryState state_;
  bool closed_ = false;
  // Appends the processed/failures counter changes (total and the day of `now`) to `changes`.
  void AddOutcome(int64_t processed, int64_t failures, TimePoint now, std::vector<Change>& changes);
  // The UTC day of the last CountOutcome ("YYYY-MM-DD") and its day number since the epoch.
  int64_t counted_day_number_ = -1;
  std::string counted_day_;
  EmbeddedTakenMarks taken_marks_{{state_, [this] { return Writable(); },
                                   [this](std::vector<Change> changes, Done durable) {
                                     Commit(std::move(changes), std::move(durable));
                                   }}};
};

}  // namespace bulkhead
