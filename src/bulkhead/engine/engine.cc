#include "bulkhead/engine/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bulkhead {
namespace {

constexpr size_t kScanBatch = 1000;

// Adds one run of a periodic task that moved `jobs` jobs and began at `start`.
void Count(auto& task, int64_t jobs, std::chrono::steady_clock::time_point start) {
  task.cycles++;
  task.jobs += jobs;
  task.wall += std::chrono::steady_clock::now() - start;
}

// Seconds a queue's head job has waited at `now_us`: since `oldest_enqueued_us` (0 when the
// queue is empty, or the head's enqueue time is unknown).
double QueueLatencySeconds(int64_t oldest_enqueued_us, int64_t now_us) {
  return oldest_enqueued_us > 0 ? std::max<int64_t>(0, now_us - oldest_enqueued_us) / 1e6 : 0;
}

// Time since FETCH of a reserved job: its reservation expiry minus its reservation length.
Duration RuntimeOf(const JobRecord& job, TimePoint now) {
  TimePoint fetched = FromUnixMicros(job.score - int64_t{job.reserve_for_s} * 1'000'000);
  return now > fetched ? now - fetched : Duration::zero();
}

}  // namespace

Engine::Engine(boost::asio::io_context& io, Store& store, const Config& config, Clock& clock,
               Rng& rng)
    : io_(io),
      store_(store),
      config_(config),
      clock_(clock),
      rng_(rng),
      retry_policy_([&config](const std::string& jt) { return config.RetryFor(jt); }, rng,
                    std::chrono::hours(24) * config.dead_ttl_days),
      started_at_(clock.Now()),
      scheduler_timer_(io, clock),
      reaper_timer_(io, clock),
      purge_timer_(io, clock),
      worker_timer_(io, clock) {}

Engine::~Engine() { Stop(); }

void Engine::Every(Timer& timer, std::chrono::milliseconds period, std::function<void()> task) {
  timer.ExpiresAfter(period);
  timer.AsyncWait([this, &timer, period, task = std::move(task)](boost::system::error_code ec) {
    if (ec || stopped_) return;
    task();
    Every(timer, period, task);
  });
}

void Engine::Start() {
  RunScheduledOnce();
  RunReaperOnce();
  RunDeadPurgeOnce();
  Every(scheduler_timer_, std::chrono::milliseconds(config_.scheduler_interval_ms),
        [this] { RunScheduledOnce(); });
  Every(reaper_timer_, std::chrono::milliseconds(config_.reaper_interval_ms),
        [this] { RunReaperOnce(); });
  Every(purge_timer_, std::chrono::seconds(60), [this] { RunDeadPurgeOnce(); });
  Every(worker_timer_, std::chrono::seconds(15), [this] {
    auto start = std::chrono::steady_clock::now();
    auto reaped = workers_.Reap(clock_.Now(), std::chrono::seconds(config_.worker_timeout_seconds));
    for (const auto& wid : reaped) {
      spdlog::info("worker {} silent for over {} s: dropped", wid, config_.worker_timeout_seconds);
      if (on_worker_reaped_) on_worker_reaped_(wid);
    }
    Count(tasks_.workers, static_cast<int64_t>(reaped.size()), start);
  });
}

void Engine::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto* t : {&scheduler_timer_, &reaper_timer_, &purge_timer_, &worker_timer_}) t->Cancel();
  // Answer every waiting FETCH with "no job" so clients are not left hanging.
  while (!waiters_.empty()) CompleteWaiter(waiters_.begin(), std::optional<std::string>());
}

void Engine::Push(JobRecord job, Done done) {
  if (builtin_ && builtin_->Handles(job.jobtype)) {
    Status valid = builtin_->Validate(job);
    if (!valid.ok()) {
      done(valid);
      return;
    }
    job.queue = kDeliveryQueue;  // the payload keeps the queue the client named
    // The dispatcher holds a delivery's reservation while the job waits parked behind its host's
    // breaker; its own deadlines end it long before this, and at start-up it adopts the
    // reservations it held before a restart.
    job.reserve_for_s = 86400;
  }
  std::string queue = job.queue;
  std::string jid = job.jid;
  bool queued = job.state == JobState::kQueued;
  auto answered = std::make_shared<bool>(false);
  store_.Push(std::move(job), [this, jid, answered, done = std::move(done)](Status st) mutable {
    *answered = true;
    if (st.code() == StatusCode::kAlreadyExists) {
      PushDuplicate(jid, std::move(done));
      return;
    }
    if (auto it = unconfirmed_pushes_.find(jid); it != unconfirmed_pushes_.end()) {
      std::vector<Done> duplicates = std::move(it->second);
      unconfirmed_pushes_.erase(it);
      for (auto& d : duplicates) d(st);
    }
    done(st);
  });
  // Accepted and committing: a duplicate arriving meanwhile waits for this commit's outcome.
  if (!*answered) unconfirmed_pushes_.try_emplace(jid);
  if (queued) WakeWaiters(queue, 1);
}

void Engine::PushDuplicate(const std::string& jid, Done done) {
  push_duplicates_.fetch_add(1, std::memory_order_relaxed);
  spdlog::debug("PUSH of jid {} that the server already holds: OK, nothing changed", jid);
  if (auto it = unconfirmed_pushes_.find(jid); it != unconfirmed_pushes_.end()) {
    it->second.push_back(std::move(done));  // answered with the first PUSH's commit
    return;
  }
  done(Status::Ok());
}

uint64_t Engine::Fetch(std::vector<std::string> queues, const std::string& wid, FetchCallback cb) {
  auto block = std::chrono::milliseconds(config_.fetch_block_ms);
  if (!wid.empty() && workers_.StateOf(wid) != WorkerState::kRunning) {
    queues.clear();  // a quiet or terminating worker gets no more jobs: wait, then $-1
  }
  if (!queues.empty()) {
    std::optional<Result<std::optional<std::string>>> immediate;
    store_.Fetch(queues, clock_.Now(), [&](Result<std::optional<JobRecord>> r) {
      if (!r.ok()) {
        immediate = r.status();
      } else if (r->has_value()) {
        immediate = std::optional<std::string>(std::move((*r)->payload));
      }
    });
    if (immediate) {
      cb(std::move(*immediate));
      return 0;
    }
  }
  uint64_t ticket = next_ticket_++;
  waiters_.push_back(
      Waiter{ticket, std::move(queues), std::move(cb), std::make_unique<Timer>(io_, clock_)});
  auto it = std::prev(waiters_.end());
  waiter_index_[ticket] = it;
  it->timer->ExpiresAfter(block);
  it->timer->AsyncWait([this, ticket](boost::system::error_code ec) {
    if (ec) return;
    auto found = waiter_index_.find(ticket);
    if (found == waiter_index_.end()) return;
    CompleteWaiter(found->second, std::optional<std::string>());
  });
  return ticket;
}

void Engine::CancelFetch(uint64_t ticket) {
  auto found = waiter_index_.find(ticket);
  if (found == waiter_index_.end()) return;
  found->second->timer->Cancel();
  waiters_.erase(found->second);
  waiter_index_.erase(found);
}

void Engine::CompleteWaiter(WaiterList::iterator it, Result<std::optional<std::string>> result) {
  FetchCallback cb = std::move(it->cb);
  it->timer->Cancel();
  waiter_index_.erase(it->ticket);
  waiters_.erase(it);
  cb(std::move(result));
}

void Engine::WakeWaiters(const std::string& queue, size_t count) {
  if (queue == kDeliveryQueue) {
    if (builtin_) builtin_->OnJobsAvailable();
    return;
  }
  for (auto it = waiters_.begin(); it != waiters_.end() && count > 0;) {
    auto next = std::next(it);
    bool wants = false;
    for (const auto& q : it->queues) wants = wants || q == queue;
    if (wants) {
      std::optional<JobRecord> job;
      store_.Fetch(it->queues, clock_.Now(), [&](Result<std::optional<JobRecord>> r) {
        if (r.ok()) job = std::move(*r);
      });
      if (job) {
        --count;
        CompleteWaiter(it, std::optional<std::string>(std::move(job->payload)));
      } else {
        break;  // nothing left for anyone (or the queue is paused)
      }
    }
    it = next;
  }
}

void Engine::Ack(const std::string& jid, Done done) {
  TimePoint now = clock_.Now();
  store_.Ack(jid, now,
             [this, jid, now, done = std::move(done)](Result<std::optional<JobRecord>> found) {
               if (!found.ok()) {
                 done(found.status());
                 return;
               }
               if (found->has_value()) {  // counted as processed by the store, in the same commit
                 if (on_job_done_) on_job_done_(**found, RuntimeOf(**found, now), false);
               } else {
                 spdlog::debug("ACK of unknown jid {}", jid);
               }
               done(Status::Ok());
             });
}

void Engine::Fail(const std::string& jid, FailureReport report, Done done, FailOptions options) {
  store_.GetWorking(jid, [this, jid, report = std::move(report), done = std::move(done),
                          options](Result<std::optional<JobRecord>> r) mutable {
    if (!r.ok()) {
      done(r.status());
      return;
    }
    if (!r->has_value()) {
      done(Status::NotFound("Job not found " + jid));
      return;
    }
    FailReserved(**r, std::move(report), std::move(done), options);
  });
}

void Engine::FailReserved(const JobRecord& job, FailureReport report, Done done,
                          const FailOptions& options) {
  TimePoint now = clock_.Now();
  auto decision = retry_policy_.Decide(job, report, now, options);
  store_.CountOutcome(1, options.discard ? 0 : 1, now);
  if (on_job_done_) on_job_done_(job, RuntimeOf(job, now), !options.discard);
  if (!decision.ok() || decision->kind == RetryDecision::Kind::kDiscard) {
    if (!decision.ok()) spdlog::error("job {}: {}", job.jid, decision.status().message());
    store_.Remove(job.jid, std::move(done));
    return;
  }
  if (decision->kind == RetryDecision::Kind::kDead) {
    spdlog::info("job {} ({}) is dead after {}: {}", job.jid, job.jobtype, report.errtype,
                 report.message.substr(0, 200));
  }
  store_.Move(std::move(decision->job), now, std::move(done));
}

Result<WorkerState> Engine::Beat(const std::string& wid, const std::string& reported_state,
                                 int64_t rss_kb) {
  return workers_.Beat(wid, reported_state, rss_kb, clock_.Now());
}

void Engine::Flush(Done done) { store_.Flush(std::move(done)); }

void Engine::Mutate(MutateOp op, JobState set, MutateFilter filter, Done done) {
  store_.Mutate(op, set, filter, clock_.Now(), std::chrono::hours(24) * config_.dead_ttl_days,
                [this, op, done = std::move(done)](Result<size_t> n) {
                  if (!n.ok()) {
                    done(n.status());
                    return;
                  }
                  if (op == MutateOp::kRequeue && *n > 0) {
                    // Requeued jobs may be for any queue: let every waiter look.
                    std::vector<std::string> queues;
                    for (const auto& w : waiters_) {
                      for (const auto& q : w.queues) queues.push_back(q);
                    }
                    for (const auto& q : queues) WakeWaiters(q, *n);
                  }
                  done(Status::Ok());
                });
}

void Engine::PauseQueues(const std::vector<std::string>& queues, bool paused, Done done) {
  store_.SetPaused(queues, paused, [this, queues, paused, done = std::move(done)](Status s) {
    if (s.ok() && !paused) {
      for (const auto& q : queues) WakeWaiters(q, SIZE_MAX);
    }
    done(s);
  });
}

void Engine::RemoveQueues(const std::vector<std::string>& queues, Done done) {
  store_.RemoveQueues(queues, std::move(done));
}

void Engine::QueueLatency(const std::vector<std::string>& queues,
                          std::function<void(Result<std::map<std::string, double>>)> cb) {
  store_.Stats([this, queues, cb = std::move(cb)](Result<StoreStats> stats) {
    if (!stats.ok()) {
      cb(stats.status());
      return;
    }
    int64_t now = ToUnixMicros(clock_.Now());
    std::map<std::string, double> out;
    for (const auto& q : queues) {
      auto it = stats->queues.find(q);
      out[q] =
          it != stats->queues.end() ? QueueLatencySeconds(it->second.oldest_enqueued_us, now) : 0;
    }
    cb(std::move(out));
  });
}

void Engine::Snapshot(std::function<void(Result<EngineSnapshot>)> cb) {
  store_.Stats([this, cb = std::move(cb)](Result<StoreStats> stats) {
    if (!stats.ok()) {
      cb(stats.status());
      return;
    }
    EngineSnapshot out;
    out.now = clock_.Now();
    out.started_at = started_at_;
    out.store = std::string(store_.Name());
    out.store_degraded = store_.degraded();
    int64_t now_us = ToUnixMicros(out.now);
    for (const auto& [name, q] : stats->queues) {
      out.queues[name] =
          QueueSnapshot{q.size, q.paused, QueueLatencySeconds(q.oldest_enqueued_us, now_us)};
    }
    out.scheduled = stats->scheduled;
    out.retries = stats->retries;
    out.dead = stats->dead;
    out.working = stats->working;
    out.enqueued = stats->enqueued;
    out.processed = stats->processed;
    out.failures = stats->failures;
    out.push_duplicates = push_duplicates();
    out.tasks = tasks_;
    out.worker_count = workers_.size();
    cb(std::move(out));
  });
}

void Engine::RunScheduledOnce() {
  // A degraded store refuses every change (the failure was logged once): polling it would log the
  // same refusal every tick.
  bool degraded = store_.degraded();
  for (JobState set : {JobState::kScheduled, JobState::kRetry}) {
    auto start = std::chrono::steady_clock::now();
    int64_t total = 0;
    while (!degraded) {
      size_t moved = 0;
      store_.EnqueueDue(set, clock_.Now(), kScanBatch, [&](Result<std::vector<JobRecord>> r) {
        if (!r.ok()) {
          spdlog::error("scheduler: {}", r.status().message());
          return;
        }
        moved = r->size();
        std::map<std::string, size_t> per_queue;
        for (const auto& j : *r) per_queue[j.queue]++;
        for (const auto& [q, n] : per_queue) WakeWaiters(q, n);
      });
      total += static_cast<int64_t>(moved);
      if (moved < kScanBatch) break;
    }
    Count(set == JobState::kScheduled ? tasks_.scheduled : tasks_.retries, total, start);
  }
}

void Engine::RunReaperOnce() {
  auto start = std::chrono::steady_clock::now();
  if (store_.degraded()) {  // expired reservations cannot be moved (see RunScheduledOnce)
    Count(tasks_.busy, 0, start);
    return;
  }
  store_.ExpiredReservations(clock_.Now(), kScanBatch, [this](Result<std::vector<JobRecord>> r) {
    if (!r.ok()) {
      spdlog::error("reservation reaper: {}", r.status().message());
      return;
    }
    tasks_.busy.jobs += static_cast<int64_t>(r->size());
    for (const auto& job : *r) {
      spdlog::info("job {} reservation expired", job.jid);
      FailReserved(job, FailureReport{"ReservationExpired", "Faktory job reservation expired", {}},
                   [](Status s) {
                     if (!s.ok()) spdlog::error("reaper: {}", s.message());
                   });
    }
  });
  Count(tasks_.busy, 0, start);
}

void Engine::RunDeadPurgeOnce() {
  auto start = std::chrono::steady_clock::now();
  if (store_.degraded()) {
    Count(tasks_.dead, 0, start);
    return;
  }
  store_.PurgeDead(clock_.Now(), kScanBatch, [this](Result<size_t> n) {
    if (!n.ok()) return;
    tasks_.dead.jobs += static_cast<int64_t>(*n);
    if (*n > 0) spdlog::info("purged {} dead jobs past their retention", *n);
  });
  Count(tasks_.dead, 0, start);
}

}  // namespace bulkhead
