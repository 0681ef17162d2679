// Store: where jobs live. The engine talks only to this interface, so the embedded stores (memory,
// SQLite) and a networked one (Redis) are interchangeable.
//
// Contract for every implementation:
// - Methods are called from one thread (the event loop). Callbacks run on that thread too; an
//   implementation may run a callback before the method returns (the embedded stores answer reads
//   inline) or later (after a commit, or a network round trip, as a Redis store always does).
// - Callers keep this contract by never depending on which: nothing after a call reads what its
//   callback fills in, a callback captures nothing that may be gone by the time it runs, and work
//   a callback continues is correct whether the call is still on the stack or not. Test suites
//   prove it over store/testing/deferred_store.h, which answers every call later.
// - A method reads its arguments before it returns or calls back, whichever comes first.
// - Calls take effect in the order they are made, and answers come in that order: a call sees the
//   effects of every earlier call, answered or not (a FETCH issued after a PUSH sees its job).
// - Between a read and a change the caller bases on it, other calls may change the job (a
//   networked store answers the read later; other nodes share it). Changes that end a reservation
//   therefore name the reservation they end (FailReserved) and change nothing when it is gone.
// - A callback named `durable` runs once the change survives a crash of the process (see each
//   implementation for power loss). Reads reflect every change made so far, durable or not.
// - No method blocks the calling thread on disk or network.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/store/batch_record.h"
#include "bulkhead/store/host_state_record.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/store/mutate_filter.h"
#include "bulkhead/store/queue_throttle.h"
#include "bulkhead/store/store_stats.h"
#include "bulkhead/store/taken_marks.h"
#include "bulkhead/store/track_record.h"
#include "bulkhead/store/unique_lock.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace bulkhead {

class Store {
 public:
  using Done = std::function<void(Status)>;
  using JobCallback = std::function<void(Result<std::optional<JobRecord>>)>;
  using JobsCallback = std::function<void(Result<std::vector<JobRecord>>)>;
  using CountCallback = std::function<void(Result<size_t>)>;
  struct StoredSigningKey {
    std::string key_id;
    std::string pem;
  };
  using SigningKeysCallback = std::function<void(Result<std::vector<StoredSigningKey>>)>;
  using HostStatesCallback = std::function<void(Result<std::vector<HostStateRecord>>)>;
  // Runs a closure on the event loop thread; how stores deliver deferred callbacks.
  using Poster = std::function<void(std::function<void()>)>;

  virtual ~Store() = default;

  // Short name for logs and benchmarks: "memory", "sqlite", "redis".
  virtual std::string_view Name() const = 0;

  // Degraded mode: true once the store has lost durability (a commit failed). From then on, until
  // a restart, every call that changes state (Push, Fetch, Ack, Move, Remove, Mutate, SetPaused,
  // ... every method below that is not a read) is refused with Unavailable(degraded_reason())
  // without changing anything, while reads (Stats, List, GetWorking, ExpiredReservations,
  // List*) keep answering. Sticky: nothing leaves degraded mode but a restart. A store that cannot
  // lose durability (memory:) is never degraded. Cheap; callable from any thread.
  virtual bool degraded() const { return false; }
  // Why the store is degraded, naming the failed commit and its cause; empty when it is not.
  virtual std::string degraded_reason() const { return {}; }

  // Transient unavailability (a networked store whose server cannot be reached, at start or after
  // a loss): why, as "store unavailable: <cause>", while it lasts; empty while the store answers.
  // Unlike degraded() it ends by itself once the server is back. While it is set, every call
  // answers Unavailable(unavailable_reason()) promptly, without waiting for the server. The
  // embedded stores are never unavailable. Cheap; callable from any thread.
  virtual std::string unavailable_reason() const { return {}; }

  // A fault the store cannot recover from that it found after Open returned (a Redis store that
  // started without its server and then found a namespace of another layout version, or a refused
  // password): `handler` gets the error once, on the loop, and the store stays unavailable. The
  // owner is expected to stop (the server shuts down and exits with that error). Null clears it.
  using FatalHandler = std::function<void(const Status&)>;
  virtual void SetFatalHandler(FatalHandler handler) {}

  // True when several nodes (processes) share this store (Redis): the working set then holds other
  // live nodes' reservations too, so a node must not take over the reservations it finds there at
  // start (the store gives back a dead node's reservations itself; see redis_store.h). False for
  // the embedded stores, which one process owns: what is in their working set at start was left
  // by this node's previous run.
  virtual bool shared() const { return false; }

  // Jobs became available in a queue through another node sharing this store: (queue, how many).
  using WakeHandler = std::function<void(const std::string& queue, size_t count)>;
  // Sets (or, with null, clears) the handler. Only a store shared by several nodes calls it, on the
  // loop, for changes made through other nodes (this node's own are its caller's to know).
  virtual void SetWakeHandler(WakeHandler handler) {}

  // The delivery host state of `host` was written or removed through another node sharing this
  // store (PutHostState, RemoveHostState). Set, cleared, called as the wake handler is.
  using HostStateHandler = std::function<void(const std::string& host)>;
  virtual void SetHostStateHandler(HostStateHandler handler) {}
  // Worker signals across nodes: a quiet or terminate ("quiet", "terminate") for the worker
  // `wid`, or for every worker (empty wid), sent through another node sharing this store with
  // PublishWorkerSignal. Set, cleared, called as the wake handler is. Like Faktory's own, a signal
  // is not stored: a node that does not hear it (its subscription down at that moment) does not
  // apply it.
  using WorkerSignalHandler = std::function<void(const std::string& wid, const std::string& state)>;
  virtual void SetWorkerSignalHandler(WorkerSignalHandler handler) {}
  // Sends a worker signal to the other nodes sharing this store; nothing on a store one process
  // owns (there is no other node). Fire and forget.
  virtual void PublishWorkerSignal(const std::string& wid, const std::string& state) {}
  // Worker rosters across nodes. A store shared by several nodes keeps each live node's
  // roster: the text `source` returns (the engine's EncodeRoster), written with every heartbeat of
  // this node and gone with it (a graceful stop, a reap, or its heartbeat's TTL). Null clears it.
  // A store one process owns keeps none (there is no other node to read it).
  using RosterSource = std::function<std::string()>;
  virtual void SetRosterSource(RosterSource source) {}
  struct NodeRoster {
    std::string node;
    std::string roster;  // as its source gave it
  };
  using RostersCallback = std::function<void(Result<std::vector<NodeRoster>>)>;
  // The rosters the other live nodes wrote last (each at most a heartbeat interval old), by node.
  // None on a store one process owns. A read.
  virtual void ListOtherRosters(RostersCallback cb) { cb(std::vector<NodeRoster>()); }
  // This node's id among the nodes sharing the store; "" on a store one process owns.
  virtual std::string node_id() const { return ""; }
  // A lease only one node holds at a time, across the nodes sharing this store: `cb` gets true when
  // this node holds `name` now (taken, or renewed: it held it already) for `ttl`, false when
  // another node does. ReleaseLease ends this node's lease early (nothing if it holds none). A
  // store one process owns grants every lease (there is no other node); only a shared store
  // excludes.
  virtual void TryLease(const std::string& name, Duration ttl,
                        std::function<void(Result<bool>)> cb) {
    cb(true);
  }
  virtual void ReleaseLease(const std::string& name) {}

  // Loads persisted state. Must be called once before anything else; fatal errors are returned
  // (a networked store whose server is unreachable may return OK and be unavailable until it
  // connects; see unavailable_reason()).
  virtual Status Open() = 0;
  // Flushes pending changes and releases resources. Idempotent.
  virtual void Close() = 0;

  // Adds a new job in state kQueued or kScheduled. AlreadyExists when the jid is known.
  virtual void Push(JobRecord job, Done durable) = 0;
  // Reserves the head of the first non-empty, non-paused queue in `queues` until
  // now + reserve_for; nullopt when there is none. The reservation is made durable with the next
  // commit without delaying the answer (a crash before that leaves the job queued: at-least-once).
  virtual void Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) = 0;
  // A worker's FETCH: as Fetch, and in the same step records `wid` (its HELLO wid) as the holder
  // of the job it reserves, as SetHolder does, so a worker's FETCH is one store call.
  virtual void FetchFor(const std::vector<std::string>& queues, const std::string& wid,
                        TimePoint now, JobCallback cb) = 0;
  // Ends a reservation and, in the same change, counts one processed job (total and the day of
  // `now`), so that no reader sees the job gone from `working` but not yet counted. The Result
  // holds the job that was reserved (its payload may be empty), or nullopt when the jid was not
  // reserved (nothing is counted then).
  virtual void Ack(const std::string& jid, TimePoint now, JobCallback durable) = 0;
  // The reserved job with this jid, or nullopt.
  virtual void GetWorking(const std::string& jid, JobCallback cb) = 0;
  // Moves the reservation of `jid` to expire at `until` (earlier or later; the delivery engine
  // renews the reservations of jobs it holds). NotFound when the jid is not reserved.
  virtual void ExtendReservation(const std::string& jid, TimePoint until, Done durable) = 0;
  // Moves an existing job to job.state with job.score, job.queue and job.payload.
  virtual void Move(JobRecord job, TimePoint now, Done durable) = 0;
  // Ends a failed reservation, only while `jid` is still reserved until `reserved_until` (the
  // reservation the caller read with GetWorking or ExpiredReservations): moves the job to
  // next->state (kRetry, kDead or kQueued) with next's score, queue and payload, or deletes it when
  // `next` is nullopt, and counts one processed job and, when `count_failure`, one failure (total
  // and the day of `now`) in the same change. FailedPrecondition, and no change, when the job is no
  // longer reserved under that reservation (acked, failed, renewed or reaped meanwhile).
  virtual void FailReserved(const std::string& jid, TimePoint reserved_until,
                            std::optional<JobRecord> next, bool count_failure, TimePoint now,
                            Done durable) = 0;
  // Deletes a job wherever it is (no error when unknown).
  virtual void Remove(const std::string& jid, Done durable) = 0;

  // Moves up to `limit` due jobs of kScheduled or kRetry to their queues.
  virtual void EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) = 0;
  // Up to `limit` expired reservations (still in working).
  virtual void ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) = 0;
  // Deletes up to `limit` dead jobs past their purge time.
  virtual void PurgeDead(TimePoint now, size_t limit, CountCallback cb) = 0;
  // MUTATE on a sorted set; the count is the number of jobs touched.
  virtual void Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
                      Duration dead_ttl, CountCallback durable) = 0;

  virtual void SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) = 0;
  virtual void RemoveQueues(const std::vector<std::string>& queues, Done durable) = 0;

  // Adds to the processed/failures counters (total and the day of `now`). Made durable with the
  // next commit; no callback.
  virtual void CountOutcome(int64_t processed, int64_t failures, TimePoint now) = 0;

  // FLUSH: deletes every job, queue, counter and pause flag. Signing keys are configuration, not
  // jobs: FLUSH keeps them, and the host states too (the delivery engine mirrors them in memory).
  virtual void Flush(Done durable) = 0;

  // ActivityPub signing keys (key id -> PEM private key), kept beside the jobs so that they survive
  // restarts with them. The store does not interpret the PEM (dispatch/StoreKeyRing validates
  // it) and never logs it; ListSigningKeys exists for the key registry only.
  // Adds or replaces the key for `key_id`.
  virtual void PutSigningKey(const std::string& key_id, const std::string& pem, Done durable) = 0;
  // Deletes the key for `key_id`; NotFound (and no change) when there is none.
  virtual void RemoveSigningKey(const std::string& key_id, Done durable) = 0;
  // Every stored key, ordered by key id.
  virtual void ListSigningKeys(SigningKeysCallback cb) = 0;

  // Delivery host states (see host_state_record.h), one per host, kept beside the jobs so that a
  // failing host's breaker, backoff and failing-since time survive a restart. Written only when
  // they change (breaker transitions, failing-since set or cleared, ...), not per attempt.
  // Adds or replaces the record of record.host.
  virtual void PutHostState(const HostStateRecord& record, Done durable) = 0;
  // Deletes the record of `host`; no error (and no change) when there is none.
  virtual void RemoveHostState(const std::string& host, Done durable) = 0;
  // Every record, ordered by host.
  virtual void ListHostStates(HostStatesCallback cb) = 0;

  virtual void Stats(std::function<void(Result<StoreStats>)> cb) = 0;
  // Jobs of a sorted set (kScheduled, kRetry, kDead, kWorking) in score order.
  virtual void List(JobState set, size_t offset, size_t limit, JobsCallback cb) = 0;

  // --- Queue throttling (queue_throttle.h) ---
  // Fetch, where a listed queue with a throttle in `throttled` whose slots are all held (in all,
  // or by throttled.wid for a per-worker throttle) counts as empty, and the job handed out of a
  // throttled queue takes a slot, in the same atomic step (so the limit holds across the nodes
  // sharing the store). A slot is released when its job leaves the working set and `timeout`
  // after the FETCH; the slots survive a restart (see each implementation). A non-empty
  // throttled.wid is recorded as the holder of the job reserved, in the same step (as FetchFor).
  virtual void FetchThrottled(const std::vector<std::string>& queues,
                              const ThrottledFetch& throttled, TimePoint now, JobCallback cb) = 0;
  using ThrottleUsesCallback = std::function<void(Result<std::vector<ThrottleUse>>)>;
  // The use of each throttle at `now`, in the order given. A read.
  virtual void ThrottleUses(const std::vector<QueueThrottle>& throttles, TimePoint now,
                            ThrottleUsesCallback cb) = 0;
  // --- Unique jobs and cron ---
  // Unique jobs: PUSH and the lock in one atomic change. AlreadyExists when the jid is known (as
  // Push). Otherwise, when `lock.key` is free at `now` (never taken, expired, released, or held by
  // job.jid itself), takes it for job.jid until lock.until and adds the job as Push does; when
  // another jid holds it, changes nothing and answers NotUniqueStatus(). A job holds at most one
  // lock. Ack releases the lock its jid holds in the same change; FAIL, retries, death and removal
  // keep it until it expires. FLUSH deletes every lock. Locks survive a restart (sqlite:, Redis).
  virtual void PushUnique(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) = 0;
  // Releases the lock `jid` holds, if any (no error when it holds none).
  virtual void ReleaseUniqueLock(const std::string& jid, Done durable) = 0;
  // Cron: claims the firing of cron entry `entry` due at `due` (atomically, for every node sharing
  // the store): true when the entry's last claimed firing is before `due` (or there is none), which
  // is then recorded as `due`; false (no change) when it is at or after `due`. FLUSH keeps these.
  using ClaimCallback = std::function<void(Result<bool>)>;
  virtual void ClaimCronFiring(const std::string& entry, TimePoint due, ClaimCallback durable) = 0;
  // The last claimed firing of every entry that has one (entry -> due time).
  using CronFiringsCallback = std::function<void(Result<std::map<std::string, TimePoint>>)>;
  virtual void ListCronFirings(CronFiringsCallback cb) = 0;
  // --- Batches (the rules are in store/batch_record.h) ---
  // Besides these, Ack and FailReserved of a batch member or callback job count it in its batch
  // and push the callbacks that became due, in the same change as the ACK or FAIL itself; so does
  // BatchCommit. A callback is pushed into the scheduled set due at `now`, exactly once.
  using BatchCallback = std::function<void(Result<std::optional<BatchRecord>>)>;
  // Creates `batch` (bid, parent_bid, description, created_us and the callbacks set; the rest
  // is the store's), uncommitted, expiring kBatchUncommittedTtlUs after created_us; counts it
  // created. With parent_bid, the parent gains it as a member in the same change. NotFound "No
  // such batch <parent_bid>" when the parent is unknown; AlreadyExists when the bid is taken.
  virtual void BatchNew(BatchRecord batch, TimePoint now, Done durable) = 0;
  // The batch, or nullopt when unknown or expired at `now`.
  virtual void BatchGet(const std::string& bid, TimePoint now, BatchCallback cb) = 0;
  // Commits the batch (counted once) and fires what is due. NotFound "No such batch <bid>".
  virtual void BatchCommit(const std::string& bid, TimePoint now, Done durable) = 0;
  // Push(job), with the job joining batch `bid` (total and pending + 1) in the same change.
  // NotFound "No such batch <bid>" (and no job) when the batch is unknown or expired.
  virtual void PushBatchMember(JobRecord job, const std::string& bid, TimePoint now,
                               Done durable) = 0;
  // Deletes up to `limit` batches whose expiry passed (uncommitted ones are counted expired; a
  // child among them leaves its parent's counts); `cb` gets how many.
  virtual void ExpireBatches(TimePoint now, size_t limit, CountCallback cb) = 0;
  virtual void GetBatchCounts(std::function<void(Result<BatchCounts>)> cb) = 0;

  // --- Job tracking (store/track_record.h) ---
  // Besides these, Fetch, Ack and FailReserved of a followed job set its state (working; success;
  // dead when `next` is kDead, else failed) in the same change.
  using TrackCallback = std::function<void(Result<std::optional<TrackRecord>>)>;
  // TRACK SET: percent and desc (those given), updated at `now`; the record is made if missing.
  virtual void TrackSet(TrackUpdate update, TimePoint now, Done durable) = 0;
  // Starts following `jid` (pushed with custom.track = 1) as enqueued, when the store holds it
  // outside working. Made right after Push (calls take effect in order: no FETCH comes between).
  virtual void TrackPushed(const std::string& jid, TimePoint now, Done durable) = 0;
  // The record of `jid`, or nullopt when there is none or it expired at `now`.
  virtual void TrackGet(const std::string& jid, TimePoint now, TrackCallback cb) = 0;
  // Deletes up to `limit` records past their 30 minutes; `cb` gets how many.
  virtual void ExpireTracks(TimePoint now, size_t limit, CountCallback cb) = 0;

  // --- Job lookup by jid and reservation holders (the dashboard's search and Busy page) ---
  // The job `jid` wherever it is (job.state says where: a queue, a sorted set, or reserved; the
  // score as List gives it, 0 for a queued job on Redis), or nullopt when unknown. One lookup,
  // whatever the backlog. A read.
  virtual void FindJob(const std::string& jid, JobCallback cb) = 0;
  // Records that worker `wid` (its HELLO wid) holds the reservation of `jid` (a worker's FETCH
  // records it in its own step: FetchFor, FetchThrottled). No change (and OK) when `jid` is not
  // reserved. The record ends with the reservation (ACK, FAIL, give-back, Move, Remove, FLUSH);
  // a later FETCH of the same job records its own holder or none. Every node sharing the store
  // sees it; it survives a restart as the reservation does (sqlite:, Redis).
  virtual void SetHolder(const std::string& jid, const std::string& wid, Done durable) = 0;
  struct HeldJob {
    JobRecord job;  // reserved (kWorking), score = reservation expiry
    std::string wid;
  };
  using HeldJobsCallback = std::function<void(Result<std::vector<HeldJob>>)>;
  // Up to `limit` reserved jobs that have a holder, with it, in no particular order. A read.
  virtual void ListHeld(size_t limit, HeldJobsCallback cb) = 0;

  // --- Cluster membership (the delivery caps hold for the whole cluster) ---
  // How many live nodes share this store, this one included, as last learned (Redis: at Open and
  // at each heartbeat, the registered nodes whose alive key exists). At least 1; always 1 for a
  // store one process owns. Loop thread.
  virtual size_t live_nodes() const { return 1; }
  // Called on the loop with the new count each time live_nodes() changes. Set and cleared (null)
  // as the wake handler is; a store one process owns never calls it.
  using NodeCountHandler = std::function<void(size_t nodes)>;
  virtual void SetNodeCountHandler(NodeCountHandler handler) {}

  // --- Parts (each a small interface in its own header; lifetime = the store) ---
  // Marks of jobs taken from another system (the Sidekiq bridge): store/taken_marks.h.
  virtual TakenMarks& taken_marks() = 0;
};

// Opens a store from a URL: "memory:", "sqlite:PATH" (relative paths are relative to the working
// directory), "redis://...", "rediss://...", "redis-sentinel://..." (redis/redis_url.h; see
// store/redis_store.h). `poster` delivers deferred callbacks to the event loop. InvalidArgument
// names the unsupported scheme; FailedPrecondition a damaged sqlite: file (see SqliteChangeLog),
// with what the operator can do, or a Redis namespace of another layout version. Errors never
// carry a Redis password.
struct StoreOptions {
  // "process": a commit survives kill -9 (SQLite synchronous=NORMAL in WAL mode: no fsync per
  // commit; a power loss may lose the last commits). "power": fsync per commit (synchronous=FULL).
  // "replicated" (Redis only): PUSH, ACK and FAIL answer once a replica has the write (WAIT).
  std::string durability = "process";
  // Redis URLs only (required for them): the event loop the store's connections run on. It must
  // outlive the store; OpenStoreFromUrl runs it until the store is open.
  boost::asio::io_context* io_context = nullptr;
  // Redis: every key starts with "{redis_namespace}:".
  std::string redis_namespace = "bulkhead";
  // rediss:// only: the CA bundle that verifies the server's certificate; empty: the system's.
  std::string redis_ca_file;
  // Redis: this process's node id (unique per process; see MakeNodeId). Empty: one is made.
  std::string node_id;
  // durability = "replicated": how long a write waits for a replica.
  std::chrono::milliseconds redis_wait_timeout{1000};
  // Redis node liveness (redis_store.h): heartbeat refresh interval, the heartbeat's TTL (a node
  // silent longer is presumed dead and its reservations given back), the reaper's interval.
  std::chrono::milliseconds redis_heartbeat_every{5000};
  std::chrono::milliseconds redis_heartbeat_ttl{15000};
  std::chrono::milliseconds redis_reap_every{5000};
  // Redis: the queues whose reservations a gracefully stopping node gives back at once (only it
  // could end them): the delivery engine's queue (engine/engine.h kDeliveryQueue; dispatch's
  // test checks they agree). Other reservations outlive the stop until ACK, FAIL or expiry.
  std::vector<std::string> redis_give_back_at_stop = {"~deliveries"};
  // Tests only (never set from a config file or flag): when positive, a sqlite: file is capped at
  // this many pages (PRAGMA max_page_count), so that a commit that would grow it fails with
  // SQLITE_FULL like a full disk and the store enters degraded mode.
  int64_t max_page_count_for_tests = 0;
  // sqlite: only. A jobs row that cannot be served (its payload is not a JSON object carrying its
  // jid, or its state is unknown) makes Open fail, naming the rows; with this set, such rows are
  // moved to the table damaged_jobs instead and the others are served (`bulkhead serve
  // --salvage-damaged-jobs`: a one-off recovery step, not a setting).
  bool salvage_damaged_jobs = false;
};
Result<std::unique_ptr<Store>> OpenStoreFromUrl(const std::string& url, Store::Poster poster,
                                                const StoreOptions& options = {});

// A node id for this process: "HOSTNAME-PID-XXXXXX" (6 random hex digits).
std::string MakeNodeId();

}  // namespace bulkhead
