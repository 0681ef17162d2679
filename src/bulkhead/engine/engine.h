// Engine: the job server's operations (push, fetch with blocking, ack, fail through the retry
// policy, heartbeats, admin commands) and its periodic tasks (scheduled/retry scanners,
// reservation reaper, dead purge, worker reaper), over a Store. Its parts, each in a file of its
// own: the FETCHes waiting for a job (fetch_waiters.h), the periodic tasks (periodic_tasks.h),
// what the nodes sharing the store tell each other (cluster_signals.h), unique and expiring jobs
// (engine_job_options.cc), queue throttles (engine_throttles.cc), batches, tracking and cron.
//
// Threading: everything runs on the io_context's thread; callbacks are invoked on it, before the
// call returns or later (as the store answers: store.h). Commands are parsed by the protocol layer;
// the engine takes typed arguments and answers with Status/Result.
// Lifetime: store answers that arrive after the engine is destroyed are dropped (their callbacks
// never run).
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bulkhead/config/config.h"
#include "bulkhead/engine/batches.h"
#include "bulkhead/engine/cluster_signals.h"
#include "bulkhead/engine/cron_scheduler.h"
#include "bulkhead/engine/engine_snapshot.h"
#include "bulkhead/engine/fetch_waiters.h"
#include "bulkhead/engine/periodic_tasks.h"
#include "bulkhead/engine/published_roster.h"
#include "bulkhead/engine/queue_throttles.h"
#include "bulkhead/engine/retry_policy.h"
#include "bulkhead/engine/tracking.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/alive_guard.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

// The queue where built-in jobs (deliveries run by the server itself) wait. Its name is outside the
// queue-name alphabet, so no client can push to it or FETCH from it.
inline constexpr char kDeliveryQueue[] = "~deliveries";

// Job types the server runs itself (webpush, activitypub, webhook). Implemented by the delivery
// dispatcher; called on the event loop.
class BuiltinJobs {
 public:
  virtual ~BuiltinJobs() = default;
  // True when jobs of this type are run by the server, never handed to FETCH.
  virtual bool Handles(std::string_view jobtype) const = 0;
  // Checks a job at PUSH; a non-OK Status is the client's error (InvalidArgument names the field).
  virtual Status Validate(const JobRecord& job) const = 0;
  // Jobs became available in kDeliveryQueue.
  virtual void OnJobsAvailable() = 0;
};

class Engine final : private FetchSource {
 public:
  using Done = std::function<void(Status)>;
  // A job's JSON, or nullopt for "no job" ($-1).
  using FetchCallback = FetchWaiters::FetchCallback;

  Engine(boost::asio::io_context& io, Store& store, const Config& config, Clock& clock, Rng& rng);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Starts the periodic tasks. Stop() cancels them and answers pending FETCHes with no job.
  void Start();
  void Stop();

  TimePoint Now() const { return clock_.Now(); }
  const Clock& clock() const { return clock_; }
  const Config& config() const { return config_; }
  Store& store() { return store_; }
  WorkerRoster& workers() { return workers_; }

  // PUSH of a parsed job; `done` runs once it is durable. Idempotent: a job whose jid the store
  // already holds (in any queue or set) changes nothing and is answered OK once that job is
  // durable (a client re-sending a PUSH whose reply it lost gets success, and no duplicate), and
  // counted in push_duplicates().
  void Push(JobRecord job, Done done);
  // Jobs taken from another system, each with its mark (the Sidekiq bridge, bridge/;
  // store/taken_marks.h): each is checked as PUSH checks a plain job (a built-in job type is
  // validated and waits in kDeliveryQueue), then all are stored with their marks, kept until
  // `mark_until`, by TakenMarks::PushMarked, and waiting FETCHes are woken. The job options of
  // unique jobs, batches, tracking and expiry (custom.*) are not read. `done` gets one Status per
  // job, in order: OK; AlreadyExists, a repeat (its jid or its mark is held); the validation's
  // error (InvalidArgument: nothing stored for that job); or the store's failure (engine_taken.cc).
  using TakenCallback = std::function<void(std::vector<Status>)>;
  void PushTaken(std::vector<MarkedJob> jobs, TimePoint mark_until, TakenCallback done);
  // PUSHes answered OK without change because the jid was already held. Any thread.
  uint64_t push_duplicates() const { return push_duplicates_.load(std::memory_order_relaxed); }

  // FETCH: the first job from `queues` (in order), waiting up to fetch_block_ms for one. A queue
  // with a throttle ([throttles]) whose slots are all held (in all, or by `wid`) counts as empty.
  // Returns a ticket for CancelFetch while the fetch waits, or 0 when `cb` already ran.
  uint64_t Fetch(std::vector<std::string> queues, const std::string& wid, FetchCallback cb);
  // Forgets a waiting fetch (its connection closed); its callback never runs. A job the store
  // reserves for it after all goes back to its queue.
  void CancelFetch(uint64_t ticket);

  // ACK: ends the reservation (an unknown jid is not an error, as in Faktory).
  void Ack(const std::string& jid, Done done);
  // FAIL: NotFound "Job not found <jid>" when the jid is not reserved. `options` (the delivery
  // engine's) can delay the retry, send the job straight to dead, or discard it.
  void Fail(const std::string& jid, FailureReport report, Done done, FailOptions options = {});

  // Routes built-in job types to `builtin` (null: none). Must outlive the engine or be reset.
  void SetBuiltinJobs(BuiltinJobs* builtin) { builtin_ = builtin; }
  // Quiet or terminate (the dashboard, /api/workers) for the worker `wid`, or every worker (empty
  // wid): applied here when the worker is connected to this node, and sent to the other nodes
  // sharing the store, which apply it to theirs; the worker hears it at its next BEAT wherever it
  // is connected. NotFound when `wid` is not connected here and no other node can have it (a
  // store one process owns).
  Status SignalWorker(const std::string& wid, WorkerState state);
  // The workers of the whole cluster: this node's (as they are now; node = the store's
  // node_id()), then those the other nodes sharing the store published with their last heartbeat
  // (at most redis_heartbeat_ms old), by node and wid. A roster that does not read is left out and
  // logged. On a store one process owns: this node's.
  void ClusterWorkers(std::function<void(Result<std::vector<NodeWorker>>)> cb);
  // BEAT: the worker's state after the beat.
  Result<WorkerState> Beat(const std::string& wid, const std::string& reported_state,
                           int64_t rss_kb);

  void Flush(Done done);
  void Mutate(MutateOp op, JobState set, MutateFilter filter, Done done);
  void PauseQueues(const std::vector<std::string>& queues, bool paused, Done done);
  void RemoveQueues(const std::vector<std::string>& queues, Done done);
  // Seconds since enqueued_at of the oldest job, per queue (0 for empty queues).
  void QueueLatency(const std::vector<std::string>& queues,
                    std::function<void(Result<std::map<std::string, double>>)> cb);

  // The engine's figures now (queues, sets, counters, tasks, workers); `cb` runs once, on the
  // loop, when the store has answered (inline for the memory and embedded stores). The views of
  // these figures (INFO, /api/*, /metrics, `bulkhead stats`) are rendered by view/, not here.
  void Snapshot(std::function<void(Result<EngineSnapshot>)> cb);

  // Batches: BATCH NEW/OPEN/COMMIT/STATUS. A PUSH whose custom.bid names a batch joins it
  // (an unknown bid: NotFound "No such batch <bid>", nothing pushed); the dead-job purge task
  // also deletes expired batches.
  Batches& batches() { return batches_; }
  // Job tracking: TRACK SET/GET. A PUSH with custom.track = 1 starts following the job;
  // the dead-job purge task also deletes tracking records past their 30 minutes.
  Tracking& tracking() { return tracking_; }

  // Called when a reserved job ends (ACK, FAIL or reservation expiry) with the time since FETCH.
  void SetJobDoneHandler(std::function<void(const JobRecord&, Duration, bool failed)> handler) {
    on_job_done_ = std::move(handler);
  }

  // Called with the wid of each worker dropped for silence (its connections should close).
  void SetWorkerReapedHandler(std::function<void(const std::string&)> handler) {
    on_worker_reaped_ = std::move(handler);
  }

  // Runs the periodic tasks once, now (tests; also used at start-up). A run ends when the store
  // has answered; a task whose previous run has not ended yet is skipped. The scheduler moves due
  // jobs in batches of 1000 and lets the loop run between batches.
  void RunScheduledOnce() { periodic_.RunScheduledOnce(); }
  void RunReaperOnce() { periodic_.RunReaperOnce(); }
  void RunDeadPurgeOnce() { periodic_.RunDeadPurgeOnce(); }

 private:
  // --- PUSH, as its steps (engine.cc) ---
  // What a PUSH is routed by: its unique lock (a unique job), the batch it joins (custom.bid), or
  // neither (a plain Push).
  struct PushRoute {
    std::optional<UniqueLock> lock;
    std::string bid;
  };
  // Parse and validate: the store reachable, the custom options (unique_*, expires_*: `route`'s
  // lock), the batch (`route`'s bid), not both. The error is the client's.
  Status ValidatePush(JobRecord& job, PushRoute& route);
  // The job's kind: a built-in job type (a delivery) is validated by its runner and goes to
  // kDeliveryQueue.
  Status ApplyJobKind(JobRecord& job);
  // The store step of the route (engine_job_options.cc): UniqueLocks::Push (counting its
  // outcome), BatchStore::PushMember, or Store::Push.
  void RoutePush(JobRecord job, PushRoute route, Done answer);
  // The answer to a PUSH of `jid`: a duplicate PUSH while this one commits waits for its outcome.
  Done AnswerPush(const std::string& jid, Done done);
  // After the store step: tracking (custom.track) starts, waiting FETCHes of `queue` wake.
  void AfterPush(const std::string& jid, const std::string& queue, bool queued, bool tracked);
  // A PUSH whose jid the store already holds.
  void PushDuplicate(const std::string& jid, Done done);

  // --- FETCH: FetchSource, what the waiters ask for (engine.cc) ---
  // Fetch, FetchFor or ThrottleStore::Fetch, as the queues' throttles and the worker say.
  void TakeJob(const std::vector<std::string>& queues, const std::string& wid,
               Store::JobCallback cb) override;
  // Notes a throttled job's slot; AdmitFetched.
  bool AdmitJob(const JobRecord& job) override;
  // Notes a throttled job's slot; puts the job back in its queue.
  void ReturnJob(JobRecord job) override;
  // Tries waiting fetches that include `queue`, oldest first, for up to `count` jobs (a delivery:
  // tells the built-in job runner).
  void WakeWaiters(const std::string& queue, size_t count);

  // --- ACK and FAIL ---
  // Ends the reservation `job` (as read from the store) through the retry policy. `done` gets
  // NotFound when the reservation ended meanwhile.
  void FailReserved(JobRecord job, FailureReport report, Done done,
                    const FailOptions& options = {});
  // The reservation reaper's: fails a job whose reservation expired.
  void FailExpired(JobRecord job);
  // The engine's figures from the store's.
  EngineSnapshot SnapshotOf(const StoreStats& stats) const;

  // Queue throttling (queue_throttles.h). A slot of `queue` came back through this node.
  void OnSlotReleased(const std::string& queue);
  // A job of `queue` was handed out at `now`: notes its slot's expiry, arms throttle_timer_.
  void OnSlotTaken(const std::string& queue, TimePoint now);
  void ArmThrottleTimer();
  // Adds each throttle's use to `out`, then calls `cb` with it.
  void AddThrottleUses(EngineSnapshot out, std::function<void(Result<EngineSnapshot>)> cb);
  QueueThrottles throttles_;
  Timer throttle_timer_;
  std::optional<TimePoint> throttle_timer_at_;  // when throttle_timer_ fires; nullopt: idle

  Store& store_;
  const Config& config_;
  Clock& clock_;
  RetryPolicy retry_policy_;
  WorkerRoster workers_;
  TimePoint started_at_;
  std::function<void(const std::string&)> on_worker_reaped_;
  BuiltinJobs* builtin_ = nullptr;
  std::function<void(const JobRecord&, Duration, bool)> on_job_done_;
  bool stopped_ = false;
  // The parts (each destroyed before those it calls: the cluster's signals wake the waiters).
  FetchWaiters waiters_;
  PeriodicTasks periodic_;
  ClusterSignals cluster_;

  // Jids of accepted PUSHes whose commit is still in flight, with the duplicates waiting for it.
  std::unordered_map<std::string, std::vector<Done>> unconfirmed_pushes_;
  std::atomic<uint64_t> push_duplicates_{0};
  Batches batches_;
  Tracking tracking_;
  AliveGuard alive_;  // store answers after the engine is gone are dropped

  // --- Unique and expiring jobs (engine_job_options.cc) ---
  // At PUSH: checks the job's custom unique_* and expires_* fields, turns expires_in into
  // expires_at in its payload, and sets `lock` for a unique job. InvalidArgument names the field.
  Status ReadPushOptions(JobRecord& job, std::optional<UniqueLock>& lock);
  // At FETCH, before `job` (just reserved) is handed out: false when it has expired (it is then
  // dropped: logged, counted, deleted with its unique lock); releases the lock of a job unique
  // until start.
  bool AdmitFetched(const JobRecord& job);
  UniqueJobCounts unique_counts_;                    // loop thread
  std::map<std::string, int64_t> expired_by_queue_;  // loop thread
  // Cron: the [[cron]] entries' scheduler, started and stopped with the engine.
  std::unique_ptr<CronScheduler> cron_;
};

}  // namespace bulkhead
