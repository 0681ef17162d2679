// MemoryState: every job, queue, set and counter, in memory, with the cost of each operation
// independent of the backlog (hash lookup by jid, O(1) queue ends, O(log n) sorted sets).
//
// It is the read side of EmbeddedStore: with `memory:` it is all there is; with `sqlite:` it is
// paired with SqliteChangeLog, the write-behind log. Every mutation appends the row-level Changes
// that make it durable to the sink passed in, in order, each built in place (emplace_back): no
// argument of a mutation may refer into that sink.
//
// Thread-compatible: the owner serialises calls (bulkhead calls it only from the event loop).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bulkhead/store/batch_book.h"
#include "bulkhead/store/change.h"
#include "bulkhead/store/holder_book.h"
#include "bulkhead/store/host_state_record.h"
#include "bulkhead/store/jid_index.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/store/mutate_filter.h"
#include "bulkhead/store/order_statistic_set.h"
#include "bulkhead/store/queue_slot.h"
#include "bulkhead/store/queue_throttle.h"
#include "bulkhead/store/store_stats.h"
#include "bulkhead/store/taken_mark_book.h"
#include "bulkhead/store/throttle_slots.h"
#include "bulkhead/store/track_book.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// A job MemoryState holds whole: every job but the cold queued ones (queue_slot.h).
struct HotJob {
  int64_t id;
  JobRecord job;
  QueueSlot* slot = nullptr;  // its place while queued
  uint64_t link = 0;          // which linking into a queue put it there (compaction's check)
  // Fetched cold: the payload (and jobtype) are still to be read from the log (FillPayload).
  bool payload_pending = false;
};

class MemoryState {
 public:
  MemoryState() = default;
  MemoryState(const MemoryState&) = delete;
  MemoryState& operator=(const MemoryState&) = delete;

  // Loading (at open): adds a persisted row as-is. Queued rows may come in any order; call
  // FinishLoad() once afterwards to order queues by their sequence numbers.
  Status LoadJob(int64_t id, JobRecord job);
  void LoadCounter(const std::string& name, int64_t value);
  void LoadPaused(const std::string& queue);
  void LoadSigningKey(const std::string& key_id, std::string pem);
  void LoadHostState(HostStateRecord record);
  void FinishLoad();

  // Adds a new job (state kQueued or kScheduled). AlreadyExists when the jid is known.
  // For kQueued, the FIFO sequence is assigned here (job.score is ignored).
  Status Add(JobRecord job, std::vector<Change>& out);

  // Pops the first job of the first non-empty, non-paused queue in `queues` and reserves it until
  // now + its reserve_for. nullopt when all are empty or paused. With `throttled`, a queue whose
  // throttle has no free slot is skipped too, and a job of a throttled queue takes a slot.
  // What FETCH of a cold job (compaction) needs read from the log: the job is returned without
  // its payload and jobtype; `id` is its row (0 when the job was hot). Unless the row is already
  // being read (`requested`, a read-ahead), `ahead` lists the next cold rows of its queue, up to
  // kReadAhead, now marked requested: the caller reads them all at once, hands the job's row to
  // FillPayload and the others to Warm. `ahead` may list rows also when `id` is 0 or requested:
  // FETCH came near the end of the rows read ahead, and the next ones are to be read (Warm)
  // while the loop serves those.
  struct ColdFetch {
    int64_t id = 0;
    bool requested = false;
    std::vector<int64_t> ahead;
  };
  static constexpr size_t kReadAhead = 64;
  // How many rows read ahead FETCH keeps before it (kReadAhead a read): more than a few workers'
  // FETCHes in flight, so that none waits for a read while the loop serves the others. A read
  // ahead runs on the writer after the writes queued before it, so the depth covers that wait
  // too: measured (bench_noop, 128 FETCHes in flight), 4 * kReadAhead left a quarter of the
  // FETCHes of a backlog waiting for their row, 16 * kReadAhead (about 10 ms of FETCHes at
  // 100,000 a second) 2-3 %. What it costs: up to that many warm payloads per queue fetched from.
  static constexpr size_t kReadAheadDepth = 16 * kReadAhead;
  std::optional<JobRecord> Fetch(const std::vector<std::string>& queues, int64_t now_us,
                                 std::vector<Change>& out,
                                 const ThrottledFetch* throttled = nullptr,
                                 ColdFetch* cold = nullptr);

  // Removes a reserved job and returns it; nullopt (and no change) when the jid is not in working.
  std::optional<JobRecord> Ack(const std::string& jid, std::vector<Change>& out);

  // The job reserved under `jid`, if any.
  std::optional<JobRecord> GetWorking(const std::string& jid) const;
  // Sets the reservation expiry of the job reserved under `jid`. NotFound when not reserved.
  Status ExtendReservation(const std::string& jid, int64_t until_us, std::vector<Change>& out);

  // Moves an existing job to job.state (kRetry, kDead, kScheduled or kQueued) with job.score and
  // job.payload; for kQueued the job goes to the back of job.queue. NotFound when jid is unknown.
  Status Move(const JobRecord& job, int64_t now_us, std::vector<Change>& out);

  // Ends the reservation of `jid` if it is still reserved until `reserved_until_us`: Move(*next)
  // or, when `next` is nullopt, Remove. FailedPrecondition (no change) when it is not.
  Status FailReserved(const std::string& jid, int64_t reserved_until_us,
                      const std::optional<JobRecord>& next, int64_t now_us,
                      std::vector<Change>& out);

  // Deletes a job wherever it is. Returns false when unknown.
  bool Remove(const std::string& jid, std::vector<Change>& out);

  // Moves up to `limit` due jobs (score <= now) of `set` (kScheduled or kRetry) onto their queues,
  // setting enqueued_at. Returns the jobs moved (their queue names matter to waiting fetchers).
  std::vector<JobRecord> EnqueueDue(JobState set, int64_t now_us, size_t limit,
                                    std::vector<Change>& out);

  // Up to `limit` reservations that expired at or before now (they stay in working).
  std::vector<JobRecord> ExpiredReservations(int64_t now_us, size_t limit) const;

  // Deletes up to `limit` dead jobs whose purge time passed. Returns how many.
  size_t PurgeDead(int64_t now_us, size_t limit, std::vector<Change>& out);

  // Applies a MUTATE to the jobs of `set` (kScheduled, kRetry or kDead) that match `filter`.
  // kClear ignores the filter (as Faktory's clear empties the whole set). Returns jobs touched.
  size_t Mutate(MutateOp op, JobState set, const MutateFilter& filter, int64_t now_us,
                int64_t dead_ttl_us, std::vector<Change>& out);

  // Pause/resume/remove queues by name; "*" means every known queue.
  void SetPaused(const std::vector<std::string>& queues, bool paused, std::vector<Change>& out);
  void RemoveQueues(const std::vector<std::string>& queues, std::vector<Change>& out);

  void AddCounter(const std::string& name, int64_t delta, std::vector<Change>& out);
  // FLUSH: every job, queue, counter and pause flag; the signing keys and host states stay.
  void DeleteAll(std::vector<Change>& out);

  // Signing keys (key id -> PEM), apart from the jobs.
  void PutSigningKey(const std::string& key_id, const std::string& pem, std::vector<Change>& out);
  // Returns false (and changes nothing) when the key id is unknown.
  bool RemoveSigningKey(const std::string& key_id, std::vector<Change>& out);
  // Ordered by key id.
  const std::map<std::string, std::string>& signing_keys() const { return signing_keys_; }

  // Delivery host states (host -> record), apart from the jobs.
  void PutHostState(const HostStateRecord& record, std::vector<Change>& out);
  // Returns false (and changes nothing) when there is no record for `host`.
  bool RemoveHostState(const std::string& host, std::vector<Change>& out);
  // Ordered by host.
  const std::map<std::string, HostStateRecord>& host_states() const { return host_states_; }

  StoreStats Stats() const;
  // Jobs of a sorted set in score order, for listings (at most `limit`, starting at `offset`).
  std::vector<JobRecord> List(JobState set, size_t offset, size_t limit) const;
  bool IsPaused(const std::string& queue) const;
  bool Contains(const std::string& jid) const {
    return by_jid_.contains(jid) || cold_.Find(jid) != nullptr;
  }

  // Queue throttling: the use of each throttle at now.
  std::vector<ThrottleUse> ThrottleUses(const std::vector<QueueThrottle>& throttles,
                                        int64_t now_us);
  // --- Unique jobs and cron (memory_state_unique.cc; contracts in store.h) ---
  void LoadUniqueLock(const std::string& key, std::string jid, int64_t until_us);
  void LoadCronFiring(const std::string& entry, int64_t due_us);
  // Add under the lock `key` (UniqueLocks::Push): FailedPrecondition NotUniqueStatus() when
  // another jid holds it unexpired at now_us, AlreadyExists when the jid is known.
  Status AddUnique(JobRecord job, const std::string& key, int64_t until_us, int64_t now_us,
                   std::vector<Change>& out);
  // Releases the lock `jid` holds, if any.
  void ReleaseUniqueOf(const std::string& jid, std::vector<Change>& out);
  // Deletes up to `limit` locks expired at now_us. Returns how many.
  size_t PurgeExpiredUniqueLocks(int64_t now_us, size_t limit, std::vector<Change>& out);
  // Store::ClaimCronFiring.
  bool ClaimCronFiring(const std::string& entry, int64_t due_us, std::vector<Change>& out);
  const std::map<std::string, int64_t>& cron_firings() const { return cron_firings_; }
  // --- Batches (batch_record.h, batch_book.h) ---
  // Loading: one row of the records table. InvalidArgument names a record that cannot be read.
  Status LoadRecord(const std::string& space, const std::string& key, const std::string& value);
  // The batch `bid`, or null when unknown or expired at `now_us`.
  const BatchRecord* FindBatch(const std::string& bid, int64_t now_us) const {
    return batches_.Find(bid, now_us);
  }
  Status CreateBatch(BatchRecord batch, int64_t now_us, std::vector<Change>& out);
  // Add(job) and its joining batch `bid`: both or neither (NotFound "No such batch <bid>").
  Status AddBatchMember(JobRecord job, const std::string& bid, int64_t now_us,
                        std::vector<Change>& out);
  Status CommitBatch(const std::string& bid, int64_t now_us, std::vector<Change>& out);
  // A reservation of `jid` ended (ACKed, or FAILed): counts it in its batch and pushes the
  // callbacks that became due, when `jid` is a batch member or callback.
  void BatchJobEnded(const std::string& jid, bool acked, int64_t now_us, std::vector<Change>& out);
  size_t ExpireBatches(int64_t now_us, size_t limit, std::vector<Change>& out);
  BatchCounts batch_counts() const;

  // --- Job tracking (track_record.h, track_book.h) ---
  TrackBook& tracks() { return tracks_; }
  const TrackBook& tracks() const { return tracks_; }
  // TrackPushed's condition: the store holds `jid`, not reserved.
  bool HoldsUnreserved(const std::string& jid) const {
    if (cold_.Find(jid) != nullptr) return true;
    return by_jid_.contains(jid) && by_jid_.at(jid)->job.state != JobState::kWorking;
  }

  // --- Compaction (memory_state_compact.cc; queue_slot.h) ---
  // Turns compaction on, before loading: queued rows load cold, and EvictDurable turns hot
  // queued jobs cold. Only a store with a log compacts (memory: keeps every payload).
  void EnableCompaction() { compact_ = true; }
  bool compacts() const { return compact_; }
  // Loading with compaction: a queued row (FIFO sequence `seq`) without its payload or jobtype,
  // which stay in the log and are read back when the job is fetched or looked at. Costs no
  // allocation per row (a jid of up to 30 bytes); a jid already loaded is dropped with a warning
  // at FinishLoad. FailedPrecondition when compaction is off.
  Status LoadColdJob(int64_t id, std::string_view jid, std::string_view queue, int64_t seq,
                     int64_t enqueued_us, int32_t reserve_for_s);
  struct Evictable {
    std::string jid;
    int64_t id;
    uint64_t link;
  };
  // The queued jobs linked since the last call: pass them to EvictDurable once the commit that
  // holds them is durable.
  std::vector<Evictable> TakeEvictable() { return std::move(evictable_); }
  // Turns each job cold that is still queued under the same link (unchanged since), unless its
  // queue holds at most kHotQueue jobs.
  static constexpr size_t kHotQueue = 64;
  void EvictDurable(const std::vector<Evictable>& jobs);
  // The row `row` read back for a fetched cold job `id` (Fetch's load_id): fills its payload and
  // jobtype when it is still pending. Returns the job as FETCH hands it out (`row`'s fields when
  // the job is gone meanwhile).
  JobRecord FillPayload(int64_t id, JobRecord row);
  // A row read ahead (ColdFetch::ahead): the job turns hot with it when it is still cold and
  // queued as it was (its jid on the same row).
  void Warm(int64_t id, JobRecord row);
  // How many jobs ahead a loop over many prefetches their cold index entries.
  static constexpr size_t kPrefetchAhead = 8;
  // A hint: `jid` is looked up among the cold jobs soon (Warm of a row a few rows on), so that
  // the memory latency of its index entry overlaps the work before.
  void PrefetchCold(std::string_view jid) const { cold_.Prefetch(jid); }
  // The row id of the cold queued job `jid`, or 0.
  int64_t ColdId(const std::string& jid) const;
  // Remove(jid) when the job `jid` is still the one stored in row `id` (its row was found gone,
  // e.g. set aside as damaged by the log); false, and no change, otherwise.
  bool RemoveRow(const std::string& jid, int64_t id, std::vector<Change>& out);
  size_t cold_jobs() const { return cold_.size(); }
  // The row id the next new job gets: every row loaded has a smaller one.
  int64_t next_id() const { return next_id_; }

  // --- Taken marks (taken_marks.h; EmbeddedTakenMarks does the work) ---
  TakenMarkBook& taken_marks() { return taken_; }
  const TakenMarkBook& taken_marks() const { return taken_; }

  // --- Lookup by jid, reservation holders (memory_state_lookup.cc; contracts: holder_store.h) ---
  // The job `jid` wherever it is, or null. Valid until the next change.
  const JobRecord* FindJob(const std::string& jid) const;
  // Whether `jid` is reserved (GetWorking without the copy).
  bool IsWorking(const std::string& jid) const;
  // Records `wid` as the holder of the reservation of `jid`; nothing when it is not reserved.
  void SetHolder(const std::string& jid, const std::string& wid, std::vector<Change>& out);
  // Up to `limit` reserved jobs with a holder.
  std::vector<std::pair<JobRecord, std::string>> ListHeld(size_t limit) const;

 private:
  void ApplyBatchEffects(BatchEffects fx, std::vector<Change>& out);
  BatchBook batches_;
  TrackBook tracks_;

  using Entry = HotJob;
  struct Queue {
    // Slots never move (the index and hot jobs point at them): a job leaving the middle leaves a
    // hole (IsHole), never at either end.
    std::deque<QueueSlot> jobs;
    size_t holes = 0;
    bool paused = false;
    uint32_t no = 0;  // its index in queue_by_no_
    // Rows read ahead (ColdFetch::ahead) that FETCH has not reached: counted down by every
    // FETCH of the queue (an estimate: it decides when to read the next ones, nothing else).
    size_t read_ahead = 0;
    // FETCHes that skip their read-ahead scan: set after a scan found less than a read's worth
    // of cold rows (bounds the scans of a queue with none left to 1 in kReadAhead / 4 FETCHes).
    size_t scans_to_skip = 0;
  };
  using QueueMap = std::map<std::string, Queue>;
  using SetKey = std::tuple<int64_t, int64_t, Entry*>;  // score, id, entry
  // Ordered by (score, id), with the rank of each element (List reaches any offset in
  // O(log n), so every page of a large set costs the same).
  using SortedSet = OrderStatisticSet<SetKey>;

  SortedSet* SetFor(JobState s);
  const SortedSet* SetFor(JobState s) const;
  void Unlink(Entry* e);  // out of its queue/set (queued: only the back is O(1); front via Fetch)
  void Link(Entry* e);    // into its queue/set per e->job.state
  void AssignQueueSeq(Entry* e);
  static void SetEnqueuedAt(JobRecord& job, int64_t now_us);
  // Releases e's throttle slot when e is reserved (called before it leaves the working set).
  void ReleaseSlot(const Entry* e);
  // The queue `name`, made known (and numbered) when it is not.
  Queue& QueueNamed(const std::string& name);
  // Takes `slot` out of `q`: O(1) at either end, a hole in the middle.
  void EraseSlot(Queue& q, QueueSlot* slot);
  // Drops the holes at both ends of `q`: Stats reads the front, the next erase may be at either.
  static void TrimHoles(Queue& q);
  static bool IsHole(const QueueSlot& s) { return s.hot == nullptr && s.id == 0; }
  // A cold job made hot in place (payload pending), or the hot job; null when unknown.
  Entry* Thaw(const std::string& jid);
  Entry* ThawSlot(QueueSlot& slot);
  // Fetch took `e` from `q` (`requested`: its slot was cold and asked for): fills `cold` with
  // its row when its payload is pending and, when a read is due, the rows to read ahead.
  void NoteColdFetch(Queue& q, const Entry& e, bool requested, ColdFetch& cold);
  // Lists the next cold, unrequested slots of `q` in `cold` (marking them requested).
  void ReadAhead(Queue& q, ColdFetch& cold);
  void FinishLoadCold();                   // the cold rows loaded put in FIFO order and indexed
  void DropDuplicateRow(QueueSlot& slot);  // a loaded cold row whose jid is known: a hole
  // Puts the slots of `q` in the order of `seqs` (one per slot).
  static void SortLoaded(Queue& q, const std::vector<int64_t>& seqs);
  void ForgetQueue(QueueMap::iterator it);

  std::unordered_map<std::string, std::unique_ptr<Entry>> by_jid_;
  // The known queues: every queue that had a job or was paused since start (or, after a restart, is
  // named by a stored job or pause flag), empty ones too, until QUEUE REMOVE or FLUSH.
  QueueMap queues_;
  std::vector<QueueMap::value_type*> queue_by_no_;  // null once removed
  JidIndex cold_;                                   // the cold queued jobs by jid
  bool compact_ = false;
  uint64_t next_link_ = 1;
  std::vector<Evictable> evictable_;
  // Loading with compaction: the cold rows go straight into their queue (in the order read); the
  // FIFO sequence of each, by queue number, orders them at FinishLoad (they are indexed there).
  std::map<uint32_t, std::vector<int64_t>> loading_;
  // The queue of the last cold row loaded: consecutive rows of one queue (the usual case) find it
  // and its sequences without a lookup.
  std::string loading_queue_;
  Queue* loading_into_ = nullptr;
  std::vector<int64_t>* loading_seqs_ = nullptr;
  SortedSet scheduled_, retries_, dead_, working_;
  std::map<std::string, int64_t> counters_;
  std::map<std::string, std::string> signing_keys_;     // key id -> PEM private key
  std::map<std::string, HostStateRecord> host_states_;  // by host
  ThrottleSlots slots_;                                 // queue throttling
  HolderBook holders_;                                  // reservation holders
  TakenMarkBook taken_;                                 // marks of jobs taken from elsewhere
  struct UniqueHold {
    std::string jid;
    int64_t until_us;
  };
  std::unordered_map<std::string, UniqueHold> unique_locks_;    // lock key -> holder
  std::unordered_map<std::string, std::string> unique_key_of_;  // holder jid -> lock key
  std::map<std::string, int64_t> cron_firings_;                 // entry -> last claimed due (µs)
  int64_t next_id_ = 1;
  int64_t next_seq_ = 1;
};

}  // namespace bulkhead
