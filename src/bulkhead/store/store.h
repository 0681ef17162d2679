// Store: where jobs live. The engine talks only to this interface, so the embedded stores (memory,
// SQLite) and a networked one (Redis) are interchangeable.
//
// The store comes in parts. Store itself is the core job store: push, fetch, ack, fail, move, the
// sorted sets, pauses, counters, stats and lookup by jid. Each feature's stored state is a small
// interface of its own that every store provides, reached through an accessor whose reference
// lives as long as the store: unique_locks() (unique_locks.h), cron_claims() (cron_claims.h),
// batches() (batch_store.h), tracks() (track_store.h), throttles() (throttle_store.h), holders()
// (holder_store.h), signing_keys() (signing_key_store.h), host_states() (host_state_store.h). What
// only a store shared by several nodes does is cluster() (cluster_link.h; a store one process owns
// gives SingleNodeLink, a cluster of one). Each implementation has a file pair per part
// (embedded_<part>, redis_<part>; testing/deferred_<part>.h). Effects that must happen in one
// change across parts stay inside each implementation: an Ack releases the job's unique lock,
// counts it in its batch and sets its tracking state in the same change as the ACK itself.
//
// Contract for every implementation, the store and its parts alike (a part's call is a call of
// its store: the order, the thread and degraded mode below hold across them):
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

#include "bulkhead/store/batch_store.h"
#include "bulkhead/store/cluster_link.h"
#include "bulkhead/store/cron_claims.h"
#include "bulkhead/store/holder_store.h"
#include "bulkhead/store/host_state_store.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/store/mutate_filter.h"
#include "bulkhead/store/signing_key_store.h"
#include "bulkhead/store/store_backup.h"
#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/store/store_stats.h"
#include "bulkhead/store/taken_marks.h"
#include "bulkhead/store/throttle_store.h"
#include "bulkhead/store/track_store.h"
#include "bulkhead/store/unique_locks.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace bulkhead {

class Store : public StoreCallbacks {
 public:
  // Runs a closure on the event loop thread; how stores deliver deferred callbacks.
  using Poster = std::function<void(std::function<void()>)>;

  virtual ~Store() = default;

  // Short name for logs and benchmarks: "memory", "sqlite", "redis".
  virtual std::string_view Name() const = 0;

  // Degraded mode: true once the store has lost durability (a commit failed). From then on, until
  // a restart, every call that changes state (Push, Fetch, Ack, Move, Remove, Mutate, SetPaused,
  // ... every method below or of a part that is not a read) is refused with
  // Unavailable(degraded_reason()) without changing anything, while reads (Stats, List,
  // GetWorking, ExpiredReservations, a part's List or Get) keep answering. Sticky: nothing leaves
  // degraded mode but a restart. A store that cannot lose durability (memory:) is never degraded.
  // Cheap; callable from any thread.
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
  // of the job it reserves, as HolderStore::Set does, so a worker's FETCH is one store call.
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

  virtual void Stats(std::function<void(Result<StoreStats>)> cb) = 0;
  // Jobs of a sorted set (kScheduled, kRetry, kDead, kWorking) in score order.
  virtual void List(JobState set, size_t offset, size_t limit, JobsCallback cb) = 0;

  // --- Job lookup by jid (the dashboard's search) ---
  // The job `jid` wherever it is (job.state says where: a queue, a sorted set, or reserved; the
  // score as List gives it, 0 for a queued job on Redis), or nullopt when unknown. One lookup,
  // whatever the backlog. A read.
  virtual void FindJob(const std::string& jid, JobCallback cb) = 0;

  // --- The parts: each a small interface of its own, provided by every store ---
  // What only a store shared by several nodes does (cluster_link.h); a store one process owns
  // gives SingleNodeLink.
  virtual ClusterLink& cluster() = 0;
  // Unique jobs (unique_locks.h).
  virtual UniqueLocks& unique_locks() = 0;
  // Cron firing claims (cron_claims.h).
  virtual CronClaims& cron_claims() = 0;
  // Batches (batch_store.h).
  virtual BatchStore& batches() = 0;
  // Job tracking (track_store.h).
  virtual TrackStore& tracks() = 0;
  // Queue throttling (throttle_store.h).
  virtual ThrottleStore& throttles() = 0;
  // Reservation holders (holder_store.h).
  virtual HolderStore& holders() = 0;
  // ActivityPub signing keys (signing_key_store.h).
  virtual SigningKeyStore& signing_keys() = 0;
  // Delivery host states (host_state_store.h).
  virtual HostStateStore& host_states() = 0;
  // Marks of jobs taken from another system (the Sidekiq bridge): taken_marks.h.
  virtual TakenMarks& taken_marks() = 0;
  // Online backups of the store's file (store_backup.h); null for a store without a file of its
  // own (memory:, Redis).
  virtual StoreBackup* backup() { return nullptr; }
};

// Opens a store from a URL: "memory:", "sqlite:PATH" (relative paths are relative to the working
// directory), "redis://...", "rediss://...", "redis-sentinel://..." (redis/redis_url.h; see
// store/redis_store.h). `poster` delivers deferred callbacks to the event loop. InvalidArgument
// names the unsupported scheme; FailedPrecondition a damaged sqlite: file (see SqliteChangeLog),
// with what the operator can do, or a Redis namespace of another layout version. Errors never
// carry a Redis password.
struct StoreOptions {
  // "process": an answered change survives kill -9 (sqlite: in the redo log or the WAL with
  // synchronous=NORMAL, no fsync per commit; a power loss may lose the last changes). "power":
  // fsync per commit (synchronous=FULL). "replicated" (Redis only): PUSH, ACK and FAIL answer once
  // a replica has the write (WAIT).
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
