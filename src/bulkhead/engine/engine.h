// Engine: the job server's operations (push, fetch with blocking, ack, fail through the retry
// policy, heartbeats, admin commands) and its periodic tasks (scheduled/retry scanners,
// reservation reaper, dead purge, worker reaper), over a Store.
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
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bulkhead/config/config.h"
#include "bulkhead/engine/batches.h"
#include "bulkhead/engine/cron_scheduler.h"
#include "bulkhead/engine/engine_snapshot.h"
#include "bulkhead/engine/published_roster.h"
#include "bulkhead/engine/queue_throttles.h"
#include "bulkhead/engine/retry_policy.h"
#include "bulkhead/engine/tracking.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/store/store.h"
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

class Engine {
 public:
  using Done = std::function<void(Status)>;
  // A job's JSON, or nullopt for "no job" ($-1).
  using FetchCallback = std::function<void(Result<std::optional<std::string>>)>;

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
  void RunScheduledOnce();
  void RunReaperOnce();
  void RunDeadPurgeOnce();

 private:
  // A FETCH not yet answered: waiting for a job (its block timer running), or probing (a store
  // Fetch for it is in flight).
  struct Waiter {
    uint64_t ticket;
    std::vector<std::string> queues;
    FetchCallback cb;
    std::unique_ptr<Timer> timer;
    std::string wid;  // the worker's: its jobs' holder, and per-worker throttles
    bool probing = false;
    bool recheck = false;  // woken while probing: probe again if the probe finds nothing
    bool expired = false;  // its block time ran out while probing: answer the probe's outcome
  };
  using WaiterList = std::list<Waiter>;

  // Asks the store for a job for the waiter `ticket`; OnProbe handles the answer.
  void Probe(uint64_t ticket);
  void OnProbe(uint64_t ticket, Result<std::optional<JobRecord>> r);
  // Applies a quiet/terminate to this node's worker `wid` (every one of them: empty wid); NotFound
  // when `wid` is not connected here.
  Status SignalHere(const std::string& wid, WorkerState state);
  // Puts a job reserved for a FETCH that is gone back in its queue.
  void ReturnToQueue(JobRecord job);
  // Tries waiting fetches that include `queue`, oldest first, for up to `count` jobs.
  void WakeWaiters(const std::string& queue, size_t count);
  void CompleteWaiter(WaiterList::iterator it, Result<std::optional<std::string>> result);
  // Ends the reservation `job` (as read from the store) through the retry policy. `done` gets
  // NotFound when the reservation ended meanwhile.
  void FailReserved(JobRecord job, FailureReport report, Done done,
                    const FailOptions& options = {});
  // One batch of the scheduler's move of due jobs of `set`; continues with the next batch, then
  // with kRetry after kScheduled.
  void EnqueueDueBatch(JobState set, int64_t moved_so_far,
                       std::chrono::steady_clock::time_point start);
  // Wraps a store callback so that it is dropped once the engine is destroyed.
  template <typename F>
  auto Guarded(F f) {
    return [alive = std::weak_ptr<bool>(alive_), f = std::move(f)](auto&&... args) mutable {
      if (alive.lock()) f(std::forward<decltype(args)>(args)...);
    };
  }
  void Every(Timer& timer, std::chrono::milliseconds period, std::function<void()> task);
  // Logs a periodic task's store failures once per state change: the first failure (and a failure
  // with another message) at error level, the first success after failures at info level; the
  // same failure every tick (a store unavailable for minutes) is not logged again.
  struct TaskHealth {
    std::string failing;  // the message last logged; empty while the task succeeds
  };
  static void NoteTaskOutcome(TaskHealth& health, const char* task, const Status& outcome);
  // A PUSH whose jid the store already holds.
  void PushDuplicate(const std::string& jid, Done done);
  // A job of a type the server runs itself: validated (its Status when it is not valid) and
  // routed to kDeliveryQueue, reserved for a day when taken. Any other job: OK, unchanged.
  Status RouteBuiltin(JobRecord& job) const;

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

  boost::asio::io_context& io_;
  Store& store_;
  const Config& config_;
  Clock& clock_;
  RetryPolicy retry_policy_;
  WorkerRoster workers_;
  TimePoint started_at_;

  WaiterList waiters_;
  std::map<uint64_t, WaiterList::iterator> waiter_index_;
  uint64_t next_ticket_ = 1;

  std::function<void(const std::string&)> on_worker_reaped_;
  BuiltinJobs* builtin_ = nullptr;
  std::function<void(const JobRecord&, Duration, bool)> on_job_done_;
  // Timers run on clock_ (util/timer.h).
  Timer scheduler_timer_;
  Timer reaper_timer_;
  Timer purge_timer_;
  Timer worker_timer_;
  bool stopped_ = false;
  // Periodic tasks whose run waits for the store (see RunScheduledOnce).
  bool scheduler_running_ = false;
  bool reaper_running_ = false;
  bool purge_running_ = false;
  EngineTaskSnapshots tasks_;  // the periodic tasks' figures, copied into every Snapshot
  TaskHealth scheduler_health_, reaper_health_, purge_health_;

  // Jids of accepted PUSHes whose commit is still in flight, with the duplicates waiting for it.
  std::unordered_map<std::string, std::vector<Done>> unconfirmed_pushes_;
  std::atomic<uint64_t> push_duplicates_{0};
  Batches batches_;
  Tracking tracking_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // see Guarded

  // --- Unique and expiring jobs (engine_job_options.cc) ---
  // At PUSH: checks the job's custom unique_* and expires_* fields, turns expires_in into
  // expires_at in its payload, and sets `lock` for a unique job. InvalidArgument names the field.
  Status ReadPushOptions(JobRecord& job, std::optional<UniqueLock>& lock);
  // At FETCH, before `job` (just reserved) is handed out: false when it has expired (it is then
  // dropped: logged, counted, deleted with its unique lock); releases the lock of a job unique
  // until start.
  bool AdmitFetched(const JobRecord& job);
  // Store::Push; Store::PushUnique with `lock` (counting its outcome); Store::PushBatchMember when
  // the job joins batch `bid` (never both: Push refuses that).
  void PushToStore(JobRecord job, std::optional<UniqueLock> lock, const std::string& bid,
                   Done answer);
  UniqueJobCounts unique_counts_;                    // loop thread
  std::map<std::string, int64_t> expired_by_queue_;  // loop thread
  // Cron: the [[cron]] entries' scheduler, started and stopped with the engine.
  std::unique_ptr<CronScheduler> cron_;
};

}  // namespace bulkhead
