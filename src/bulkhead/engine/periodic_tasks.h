// PeriodicTasks: the engine's periodic work over the store: the scheduler (moves due jobs of the
// scheduled and retry sets to their queues), the reservation reaper (expired reservations fail),
// the dead-job purge (with the expiry of batches and tracking records), and the worker reaper
// (drops workers silent for longer than worker_timeout_seconds). Each run is counted in Faktory's
// task figures (INFO "tasks").
//
// A run ends when the store has answered; a task whose previous run has not ended yet is skipped.
// The scheduler moves due jobs in batches of 1000 and lets the loop run between batches. A
// degraded store (store.h) refuses every change, so the tasks that change the store skip it
// (its failure was logged once). A task's store failures are logged once per state change: the
// first failure (and a failure with another message) at error level, the first success after
// failures at info level; the same failure every tick (a store unavailable for minutes) is not
// logged again.
//
// Threading: the loop's. Answers that arrive after the PeriodicTasks are gone are dropped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "bulkhead/config/config.h"
#include "bulkhead/engine/engine_snapshot.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/alive_guard.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

class PeriodicTasks {
 public:
  // What the tasks hand back to the engine.
  struct Hooks {
    // Jobs became available in `queue` (the scheduler moved them there).
    std::function<void(const std::string& queue, size_t count)> wake;
    // The reservation of `job` (as read from the store) expired: the job is to fail.
    std::function<void(JobRecord job)> reservation_expired;
    // The worker `wid` was dropped for silence.
    std::function<void(const std::string& wid)> worker_reaped;
  };

  PeriodicTasks(boost::asio::io_context& io, Store& store, const Config& config, Clock& clock,
                WorkerRoster& workers, Hooks hooks);

  // Runs the store's tasks once now, then every task on its interval until Stop.
  void Start();
  void Stop();

  // One run of each task, now (also what Start does first).
  void RunScheduledOnce();
  void RunReaperOnce();
  void RunDeadPurgeOnce();

  // The tasks' figures so far.
  const EngineTaskSnapshots& snapshots() const { return snapshots_; }

 private:
  // A task's last logged failure; empty while the task succeeds.
  struct TaskHealth {
    std::string failing;
  };
  static void NoteTaskOutcome(TaskHealth& health, const char* task, const Status& outcome);
  void Every(Timer& timer, std::chrono::milliseconds period, std::function<void()> task);
  // One batch of the scheduler's move of due jobs of `set`; continues with the next batch, then
  // with kRetry after kScheduled.
  void EnqueueDueBatch(JobState set, int64_t moved_so_far,
                       std::chrono::steady_clock::time_point start);
  void ReapWorkers();

  boost::asio::io_context& io_;
  Store& store_;
  const Config& config_;
  Clock& clock_;
  WorkerRoster& workers_;
  Hooks hooks_;
  // Timers run on clock_ (util/timer.h).
  Timer scheduler_timer_;
  Timer reaper_timer_;
  Timer purge_timer_;
  Timer worker_timer_;
  bool stopped_ = false;
  // Runs waiting for the store.
  bool scheduler_running_ = false;
  bool reaper_running_ = false;
  bool purge_running_ = false;
  EngineTaskSnapshots snapshots_;
  TaskHealth scheduler_health_, reaper_health_, purge_health_;
  AliveGuard alive_;
};

}  // namespace bulkhead
