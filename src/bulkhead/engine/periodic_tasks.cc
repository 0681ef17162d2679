#include "bulkhead/engine/periodic_tasks.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <map>

namespace bulkhead {
namespace {

constexpr size_t kScanBatch = 1000;

// Adds one run of a periodic task that moved `jobs` jobs and began at `start`.
void Count(TaskSnapshot& task, int64_t jobs, std::chrono::steady_clock::time_point start) {
  task.cycles++;
  task.jobs += jobs;
  task.wall += std::chrono::steady_clock::now() - start;
}

}  // namespace

PeriodicTasks::PeriodicTasks(boost::asio::io_context& io, Store& store, const Config& config,
                             Clock& clock, WorkerRoster& workers, Hooks hooks)
    : io_(io),
      store_(store),
      config_(config),
      clock_(clock),
      workers_(workers),
      hooks_(std::move(hooks)),
      scheduler_timer_(io, clock),
      reaper_timer_(io, clock),
      purge_timer_(io, clock),
      worker_timer_(io, clock) {}

void PeriodicTasks::Every(Timer& timer, std::chrono::milliseconds period,
                          std::function<void()> task) {
  timer.ExpiresAfter(period);
  timer.AsyncWait([this, &timer, period, task = std::move(task)](boost::system::error_code ec) {
    if (ec || stopped_) return;
    task();
    Every(timer, period, task);
  });
}

void PeriodicTasks::Start() {
  RunScheduledOnce();
  RunReaperOnce();
  RunDeadPurgeOnce();
  Every(scheduler_timer_, std::chrono::milliseconds(config_.scheduler_interval_ms),
        [this] { RunScheduledOnce(); });
  Every(reaper_timer_, std::chrono::milliseconds(config_.reaper_interval_ms),
        [this] { RunReaperOnce(); });
  Every(purge_timer_, std::chrono::seconds(60), [this] { RunDeadPurgeOnce(); });
  Every(worker_timer_, std::chrono::seconds(15), [this] { ReapWorkers(); });
}

void PeriodicTasks::Stop() {
  stopped_ = true;
  for (auto* t : {&scheduler_timer_, &reaper_timer_, &purge_timer_, &worker_timer_}) t->Cancel();
}

void PeriodicTasks::ReapWorkers() {
  auto start = std::chrono::steady_clock::now();
  auto reaped = workers_.Reap(clock_.Now(), std::chrono::seconds(config_.worker_timeout_seconds));
  for (const auto& wid : reaped) {
    spdlog::info("worker {} silent for over {} s: dropped", wid, config_.worker_timeout_seconds);
    if (hooks_.worker_reaped) hooks_.worker_reaped(wid);
  }
  Count(snapshots_.workers, static_cast<int64_t>(reaped.size()), start);
}

void PeriodicTasks::NoteTaskOutcome(TaskHealth& health, const char* task, const Status& outcome) {
  if (!outcome.ok()) {
    if (health.failing == outcome.message()) return;
    health.failing = outcome.message();
    spdlog::error("{}: {} (logged again when it recovers or the error changes)", task,
                  outcome.message());
  } else if (!health.failing.empty()) {
    health.failing.clear();
    spdlog::info("{}: the store answers again", task);
  }
}

void PeriodicTasks::RunScheduledOnce() {
  if (scheduler_running_) return;
  scheduler_running_ = true;
  EnqueueDueBatch(JobState::kScheduled, 0, std::chrono::steady_clock::now());
}

void PeriodicTasks::EnqueueDueBatch(JobState set, int64_t moved_so_far,
                                    std::chrono::steady_clock::time_point start) {
  auto finish = [this, set, start](int64_t moved) {
    Count(set == JobState::kScheduled ? snapshots_.scheduled : snapshots_.retries, moved, start);
    if (set == JobState::kScheduled) {
      EnqueueDueBatch(JobState::kRetry, 0, std::chrono::steady_clock::now());
    } else {
      scheduler_running_ = false;
    }
  };
  // A degraded store refuses every change (the failure was logged once): polling it would log the
  // same refusal every tick.
  if (store_.degraded()) {
    finish(moved_so_far);
    return;
  }
  store_.EnqueueDue(
      set, clock_.Now(), kScanBatch,
      alive_.Guard([this, set, moved_so_far, start, finish](Result<std::vector<JobRecord>> r) {
        size_t moved = 0;
        NoteTaskOutcome(scheduler_health_, "scheduler", r.status());
        if (r.ok()) {
          moved = r->size();
          std::map<std::string, size_t> per_queue;
          for (const auto& j : *r) per_queue[j.queue]++;
          for (const auto& [q, n] : per_queue) hooks_.wake(q, n);
        }
        int64_t total = moved_so_far + static_cast<int64_t>(moved);
        if (moved < kScanBatch) {
          finish(total);
          return;
        }
        // More may be due: the next batch once the loop has run what is ready.
        boost::asio::post(
            io_, alive_.Guard([this, set, total, start] { EnqueueDueBatch(set, total, start); }));
      }));
}

void PeriodicTasks::RunReaperOnce() {
  auto start = std::chrono::steady_clock::now();
  if (store_.degraded()) {  // expired reservations cannot be moved (see EnqueueDueBatch)
    Count(snapshots_.busy, 0, start);
    return;
  }
  if (reaper_running_) return;
  reaper_running_ = true;
  store_.ExpiredReservations(clock_.Now(), kScanBatch,
                             alive_.Guard([this, start](Result<std::vector<JobRecord>> r) {
                               reaper_running_ = false;
                               int64_t expired = 0;
                               NoteTaskOutcome(reaper_health_, "reservation reaper", r.status());
                               if (r.ok()) {
                                 expired = static_cast<int64_t>(r->size());
                                 for (auto& job : *r) {
                                   spdlog::info("job {} reservation expired", job.jid);
                                   hooks_.reservation_expired(std::move(job));
                                 }
                               }
                               Count(snapshots_.busy, expired, start);
                             }));
}

void PeriodicTasks::RunDeadPurgeOnce() {
  auto start = std::chrono::steady_clock::now();
  if (store_.degraded()) {
    Count(snapshots_.dead, 0, start);
    return;
  }
  if (purge_running_) return;
  purge_running_ = true;
  store_.PurgeDead(clock_.Now(), kScanBatch, alive_.Guard([this, start](Result<size_t> n) {
    purge_running_ = false;
    NoteTaskOutcome(purge_health_, "dead job purge", n.status());
    int64_t purged = n.ok() ? static_cast<int64_t>(*n) : 0;
    if (purged > 0) spdlog::info("purged {} dead jobs past their retention", purged);
    Count(snapshots_.dead, purged, start);
  }));
  store_.batches().Expire(clock_.Now(), kScanBatch, alive_.Guard([](Result<size_t> n) {
    if (!n.ok()) {
      spdlog::warn("batch expiry: {}", n.status().message());
    } else if (*n > 0) {
      spdlog::info("deleted {} expired batches", *n);
    }
  }));
  store_.tracks().Expire(clock_.Now(), kScanBatch, alive_.Guard([](Result<size_t> n) {
    if (!n.ok()) spdlog::warn("tracking expiry: {}", n.status().message());
  }));
}

}  // namespace bulkhead
