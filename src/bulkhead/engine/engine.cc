#include "bulkhead/engine/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

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
    : throttles_(config.throttles),
      throttle_timer_(io, clock),
      io_(io),
      store_(store),
      config_(config),
      clock_(clock),
      retry_policy_([&config](const std::string& jt) { return config.RetryFor(jt); }, rng,
                    std::chrono::hours(24) * config.dead_ttl_days),
      started_at_(clock.Now()),
      scheduler_timer_(io, clock),
      reaper_timer_(io, clock),
      purge_timer_(io, clock),
      worker_timer_(io, clock),
      batches_(store, clock, rng, [&config](const std::string& jt) { return config.RetryFor(jt); }),
      tracking_(store, clock) {
  cron_ = std::make_unique<CronScheduler>(
      io, clock, store, config.cron, rng,
      [this](JobRecord job, Done done) { Push(std::move(job), std::move(done)); });
  // Jobs pushed or moved through other nodes wake this node's waiting FETCHes too.
  store_.SetWakeHandler(
      Guarded([this](const std::string& queue, size_t count) { WakeWaiters(queue, count); }));
  // Quiet/terminate sent through other nodes, for this node's workers.
  store_.SetWorkerSignalHandler(Guarded([this](const std::string& wid, const std::string& name) {
    auto state = ParseWorkerState(name);
    if (!state.ok() || *state == WorkerState::kRunning) return;
    (void)SignalHere(wid, *state);  // NotFound: connected to another node
  }));
  // This node's workers, for the other nodes' views (written with each heartbeat).
  store_.SetRosterSource([this] { return EncodeRoster(workers_.workers()); });
}

Engine::~Engine() {
  Stop();
  store_.SetWakeHandler(nullptr);
  store_.SetWorkerSignalHandler(nullptr);
  store_.SetRosterSource(nullptr);
}

Status Engine::SignalHere(const std::string& wid, WorkerState state) {
  if (!wid.empty()) return workers_.Signal(wid, state);
  workers_.SignalAll(state);
  return Status::Ok();
}

Status Engine::SignalWorker(const std::string& wid, WorkerState state) {
  if (store_.shared()) store_.PublishWorkerSignal(wid, WorkerStateName(state));
  Status s = SignalHere(wid, state);
  if (s.code() == StatusCode::kNotFound && store_.shared()) return Status::Ok();
  return s;
}

void Engine::ClusterWorkers(std::function<void(Result<std::vector<NodeWorker>>)> cb) {
  store_.ListOtherRosters(
      Guarded([this, cb = std::move(cb)](Result<std::vector<Store::NodeRoster>> rosters) {
        if (!rosters.ok()) return cb(rosters.status());
        std::vector<NodeWorker> out;
        const std::string here = store_.node_id();
        for (const auto& [wid, info] : workers_.workers()) out.push_back({here, info});
        for (const Store::NodeRoster& r : *rosters) {
          auto workers = DecodeRoster(r.roster);
          if (!workers.ok()) {
            spdlog::warn("the worker roster of node {} does not read: {}", r.node,
                         workers.status().message());
            continue;
          }
          for (WorkerInfo& info : *workers) out.push_back({r.node, std::move(info)});
        }
        cb(std::move(out));
      }));
}

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
  cron_->Start();
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
  cron_->Stop();
  for (auto* t : {&scheduler_timer_, &reaper_timer_, &purge_timer_, &worker_timer_}) t->Cancel();
  throttle_timer_.Cancel();
  throttle_timer_at_.reset();
  // Answer every waiting FETCH with "no job" so clients are not left hanging.
  while (!waiters_.empty()) CompleteWaiter(waiters_.begin(), std::optional<std::string>());
}

void Engine::Push(JobRecord job, Done done) {
  // A store that cannot be reached answers every call Unavailable: say so before validating (a
  // delivery naming a signing key would otherwise be refused for a key ring not loaded yet).
  if (std::string why = store_.unavailable_reason(); !why.empty()) {
    done(Status::Unavailable(std::move(why)));
    return;
  }
  std::optional<UniqueLock> lock;  // unique jobs
  if (Status options = ReadPushOptions(job, lock); !options.ok()) {
    done(options);
    return;
  }
  std::string bid = Batches::BatchIdOf(job.payload);  // batches
  if (lock &&
      !bid.empty()) {  // the store has no atomic step for both (docs/unique-expiring-cron.md)
    done(Status::InvalidArgument(
        "custom.unique_for: a job that joins a batch (custom.bid) cannot also be unique"));
    return;
  }
  if (Status routed = RouteBuiltin(job); !routed.ok()) {
    done(routed);
    return;
  }
  std::string queue = job.queue;
  std::string jid = job.jid;
  bool queued = job.state == JobState::kQueued;
  // While this PUSH commits, a PUSH of the same jid waits for its outcome (PushDuplicate).
  bool registered = unconfirmed_pushes_.try_emplace(jid).second;
  bool tracked = Tracking::IsTracked(job.payload);
  PushToStore(std::move(job), std::move(lock), bid,
              Guarded([this, jid, registered, done = std::move(done)](Status st) mutable {
                bool held_before = st.code() == StatusCode::kAlreadyExists;
                if (registered) {
                  auto it = unconfirmed_pushes_.find(jid);
                  std::vector<Done> waiting = std::move(it->second);
                  unconfirmed_pushes_.erase(it);
                  // A jid held before this PUSH: the duplicates that waited on it are answered as
                  // it is.
                  for (auto& d : waiting) d(held_before ? Status::Ok() : st);
                }
                if (held_before) {
                  PushDuplicate(jid, std::move(done));
                  return;
                }
                done(st);
              }));
  if (tracked) {  // right after the Push: no FETCH of the job comes between (store.h)
    store_.TrackPushed(jid, clock_.Now(), Guarded([jid](Status s) {
                         if (!s.ok())
                           spdlog::warn("job {}: tracking not started: {}", jid, s.message());
                       }));
  }
  if (queued) WakeWaiters(queue, 1);
}

Status Engine::RouteBuiltin(JobRecord& job) const {
  if (!builtin_ || !builtin_->Handles(job.jobtype)) return Status::Ok();
  Status valid = builtin_->Validate(job);
  if (!valid.ok()) return valid;
  job.queue = kDeliveryQueue;  // the payload keeps the queue the client named
  // The dispatcher holds a delivery's reservation while the job waits parked behind its host's
  // breaker; its own deadlines end it long before this, and at start-up it adopts the
  // reservations it held before a restart.
  job.reserve_for_s = 86400;
  return Status::Ok();
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
  if (!wid.empty() && workers_.StateOf(wid) != WorkerState::kRunning) {
    queues.clear();  // a quiet or terminating worker gets no more jobs: wait, then $-1
  }
  uint64_t ticket = next_ticket_++;
  waiters_.push_back(
      Waiter{ticket, std::move(queues), std::move(cb), std::make_unique<Timer>(io_, clock_), wid});
  auto it = std::prev(waiters_.end());
  waiter_index_[ticket] = it;
  it->timer->ExpiresAfter(std::chrono::milliseconds(config_.fetch_block_ms));
  it->timer->AsyncWait([this, ticket](boost::system::error_code ec) {
    if (ec) return;
    auto found = waiter_index_.find(ticket);
    if (found == waiter_index_.end()) return;
    if (found->second->probing) {
      found->second->expired = true;  // the probe's answer ends it
      return;
    }
    CompleteWaiter(found->second, std::optional<std::string>());
  });
  if (!it->queues.empty()) Probe(ticket);
  return waiter_index_.contains(ticket) ? ticket : 0;
}

void Engine::Probe(uint64_t ticket) {
  Waiter& w = *waiter_index_.at(ticket);
  w.probing = true;
  w.recheck = false;
  auto answer = Guarded(
      [this, ticket](Result<std::optional<JobRecord>> r) { OnProbe(ticket, std::move(r)); });
  std::vector<QueueThrottle> throttles = throttles_.Of(w.queues);
  // A worker's FETCH records the worker as the job's holder in the same store step.
  if (throttles.empty() && !w.wid.empty()) {
    store_.FetchFor(w.queues, w.wid, clock_.Now(), std::move(answer));
  } else if (throttles.empty()) {
    store_.Fetch(w.queues, clock_.Now(), std::move(answer));
  } else {
    store_.FetchThrottled(w.queues, ThrottledFetch{std::move(throttles), w.wid}, clock_.Now(),
                          std::move(answer));
  }
}

void Engine::OnProbe(uint64_t ticket, Result<std::optional<JobRecord>> r) {
  if (r.ok() && r->has_value() && throttles_.Find((*r)->queue)) {
    OnSlotTaken((*r)->queue, clock_.Now());
  }
  auto found = waiter_index_.find(ticket);
  if (found == waiter_index_.end()) {  // withdrawn (connection closed, or Stop) while probing
    if (r.ok() && r->has_value()) ReturnToQueue(std::move(**r));
    return;
  }
  auto it = found->second;
  it->probing = false;
  if (!r.ok()) {
    CompleteWaiter(it, r.status());
  } else if (r->has_value()) {
    if (!AdmitFetched(**r)) {  // expired and dropped: the same FETCH goes on, on a later turn
      boost::asio::post(io_, Guarded([this, ticket] {
                          auto again = waiter_index_.find(ticket);
                          if (again != waiter_index_.end() && !again->second->probing)
                            Probe(ticket);
                        }));
      return;
    }
    CompleteWaiter(it, std::optional<std::string>(std::move((*r)->payload)));
  } else if (it->expired) {
    CompleteWaiter(it, std::optional<std::string>());
  } else if (it->recheck) {
    Probe(ticket);
  }
}

void Engine::ReturnToQueue(JobRecord job) {
  spdlog::debug("job {} was reserved for a FETCH that is gone: back to queue {}", job.jid,
                job.queue);
  std::string jid = job.jid;
  std::string queue = job.queue;
  job.state = JobState::kQueued;
  store_.Move(std::move(job), clock_.Now(), Guarded([jid](Status s) {
                if (!s.ok()) {
                  spdlog::warn("job {} stays reserved until its reservation expires: {}", jid,
                               s.message());
                }
              }));
  WakeWaiters(queue, 1);
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
  // Probes complete waiters (and run their callbacks) inline with an inline store: pick the
  // waiters first, then probe those still waiting.
  std::vector<uint64_t> wake;
  for (auto& w : waiters_) {
    if (count == 0) break;
    if (std::find(w.queues.begin(), w.queues.end(), queue) == w.queues.end()) continue;
    --count;
    if (w.probing) {
      w.recheck = true;  // its probe may have missed the new job
    } else {
      wake.push_back(w.ticket);
    }
  }
  for (uint64_t ticket : wake) {
    auto found = waiter_index_.find(ticket);
    if (found != waiter_index_.end() && !found->second->probing) Probe(ticket);
  }
}

void Engine::Ack(const std::string& jid, Done done) {
  TimePoint now = clock_.Now();
  store_.Ack(
      jid, now,
      Guarded([this, jid, now, done = std::move(done)](Result<std::optional<JobRecord>> found) {
        if (!found.ok()) {
          done(found.status());
          return;
        }
        if (found->has_value()) {  // counted as processed by the store, in the same commit
          OnSlotReleased((*found)->queue);
          if (on_job_done_) on_job_done_(**found, RuntimeOf(**found, now), false);
        } else {
          spdlog::debug("ACK of unknown jid {}", jid);
        }
        done(Status::Ok());
      }));
}

void Engine::Fail(const std::string& jid, FailureReport report, Done done, FailOptions options) {
  store_.GetWorking(jid, Guarded([this, jid, report = std::move(report), done = std::move(done),
                                  options](Result<std::optional<JobRecord>> r) mutable {
                      if (!r.ok()) {
                        done(r.status());
                        return;
                      }
                      if (!r->has_value()) {
                        done(Status::NotFound("Job not found " + jid));
                        return;
                      }
                      FailReserved(std::move(**r), std::move(report), std::move(done), options);
                    }));
}

void Engine::FailReserved(JobRecord job, FailureReport report, Done done,
                          const FailOptions& options) {
  TimePoint now = clock_.Now();
  auto decision = retry_policy_.Decide(job, report, now, options);
  std::optional<JobRecord> next;
  bool dead = false;
  if (!decision.ok()) {
    spdlog::error("job {}: {}", job.jid, decision.status().message());
  } else if (decision->kind != RetryDecision::Kind::kDiscard) {
    dead = decision->kind == RetryDecision::Kind::kDead;
    next = std::move(decision->job);
  }
  bool failed = !options.discard;
  std::string jid = job.jid;
  TimePoint reserved_until = FromUnixMicros(job.score);
  job.payload.clear();  // the done handler needs the bookkeeping, not the JSON
  store_.FailReserved(
      jid, reserved_until, std::move(next), failed, now,
      Guarded([this, job = std::move(job), report = std::move(report), dead, failed, now,
               done = std::move(done)](Status s) {
        if (s.code() == StatusCode::kFailedPrecondition) {  // acked or failed meanwhile
          done(Status::NotFound("Job not found " + job.jid));
          return;
        }
        if (!s.ok()) {
          done(s);
          return;
        }
        OnSlotReleased(job.queue);
        if (dead) {
          spdlog::info("job {} ({}) is dead after {}: {}", job.jid, job.jobtype, report.errtype,
                       report.message.substr(0, 200));
        }
        if (on_job_done_) on_job_done_(job, RuntimeOf(job, now), failed);
        done(Status::Ok());
      }));
}

Result<WorkerState> Engine::Beat(const std::string& wid, const std::string& reported_state,
                                 int64_t rss_kb) {
  return workers_.Beat(wid, reported_state, rss_kb, clock_.Now());
}

void Engine::Flush(Done done) { store_.Flush(std::move(done)); }

void Engine::Mutate(MutateOp op, JobState set, MutateFilter filter, Done done) {
  store_.Mutate(op, set, filter, clock_.Now(), std::chrono::hours(24) * config_.dead_ttl_days,
                Guarded([this, op, done = std::move(done)](Result<size_t> n) {
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
                }));
}

void Engine::PauseQueues(const std::vector<std::string>& queues, bool paused, Done done) {
  store_.SetPaused(queues, paused,
                   Guarded([this, queues, paused, done = std::move(done)](Status s) {
                     if (s.ok() && !paused) {
                       for (const auto& q : queues) WakeWaiters(q, SIZE_MAX);
                     }
                     done(s);
                   }));
}

void Engine::RemoveQueues(const std::vector<std::string>& queues, Done done) {
  store_.RemoveQueues(queues, std::move(done));
}

void Engine::QueueLatency(const std::vector<std::string>& queues,
                          std::function<void(Result<std::map<std::string, double>>)> cb) {
  store_.Stats(Guarded([this, queues, cb = std::move(cb)](Result<StoreStats> stats) {
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
  }));
}

void Engine::Snapshot(std::function<void(Result<EngineSnapshot>)> cb) {
  store_.Stats(Guarded([this, cb = std::move(cb)](Result<StoreStats> stats) {
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
    out.unique = unique_counts_;
    out.jobs_expired = expired_by_queue_;
    out.cron = cron_->Snapshot(out.now);
    store_.GetBatchCounts(Guarded(
        [this, out = std::move(out), cb = std::move(cb)](Result<BatchCounts> batches) mutable {
          if (!batches.ok()) return cb(batches.status());
          out.batches = *batches;
          AddThrottleUses(std::move(out), std::move(cb));
        }));
  }));
}

void Engine::NoteTaskOutcome(TaskHealth& health, const char* task, const Status& outcome) {
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

void Engine::RunScheduledOnce() {
  if (scheduler_running_) return;
  scheduler_running_ = true;
  EnqueueDueBatch(JobState::kScheduled, 0, std::chrono::steady_clock::now());
}

void Engine::EnqueueDueBatch(JobState set, int64_t moved_so_far,
                             std::chrono::steady_clock::time_point start) {
  auto finish = [this, set, start](int64_t moved) {
    Count(set == JobState::kScheduled ? tasks_.scheduled : tasks_.retries, moved, start);
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
      Guarded([this, set, moved_so_far, start, finish](Result<std::vector<JobRecord>> r) {
        size_t moved = 0;
        NoteTaskOutcome(scheduler_health_, "scheduler", r.status());
        if (r.ok()) {
          moved = r->size();
          std::map<std::string, size_t> per_queue;
          for (const auto& j : *r) per_queue[j.queue]++;
          for (const auto& [q, n] : per_queue) WakeWaiters(q, n);
        }
        int64_t total = moved_so_far + static_cast<int64_t>(moved);
        if (moved < kScanBatch) {
          finish(total);
          return;
        }
        // More may be due: the next batch once the loop has run what is ready.
        boost::asio::post(
            io_, Guarded([this, set, total, start] { EnqueueDueBatch(set, total, start); }));
      }));
}

void Engine::RunReaperOnce() {
  auto start = std::chrono::steady_clock::now();
  if (store_.degraded()) {  // expired reservations cannot be moved (see EnqueueDueBatch)
    Count(tasks_.busy, 0, start);
    return;
  }
  if (reaper_running_) return;
  reaper_running_ = true;
  store_.ExpiredReservations(
      clock_.Now(), kScanBatch, Guarded([this, start](Result<std::vector<JobRecord>> r) {
        reaper_running_ = false;
        int64_t expired = 0;
        NoteTaskOutcome(reaper_health_, "reservation reaper", r.status());
        if (r.ok()) {
          expired = static_cast<int64_t>(r->size());
          for (auto& job : *r) {
            spdlog::info("job {} reservation expired", job.jid);
            std::string jid = job.jid;
            FailReserved(std::move(job),
                         FailureReport{"ReservationExpired", "Faktory job reservation expired", {}},
                         [jid](Status s) {
                           if (s.code() == StatusCode::kNotFound) {
                             spdlog::debug("reaper: job {} was acked or failed before it was moved",
                                           jid);
                           } else if (!s.ok()) {
                             spdlog::error("reaper: {}", s.message());
                           }
                         });
          }
        }
        Count(tasks_.busy, expired, start);
      }));
}

void Engine::RunDeadPurgeOnce() {
  auto start = std::chrono::steady_clock::now();
  if (store_.degraded()) {
    Count(tasks_.dead, 0, start);
    return;
  }
  if (purge_running_) return;
  purge_running_ = true;
  store_.PurgeDead(clock_.Now(), kScanBatch, Guarded([this, start](Result<size_t> n) {
                     purge_running_ = false;
                     NoteTaskOutcome(purge_health_, "dead job purge", n.status());
                     int64_t purged = n.ok() ? static_cast<int64_t>(*n) : 0;
                     if (purged > 0)
                       spdlog::info("purged {} dead jobs past their retention", purged);
                     Count(tasks_.dead, purged, start);
                   }));
  store_.ExpireBatches(clock_.Now(), kScanBatch, Guarded([](Result<size_t> n) {
                         if (!n.ok()) {
                           spdlog::warn("batch expiry: {}", n.status().message());
                         } else if (*n > 0) {
                           spdlog::info("deleted {} expired batches", *n);
                         }
                       }));
  store_.ExpireTracks(clock_.Now(), kScanBatch, Guarded([](Result<size_t> n) {
                        if (!n.ok()) spdlog::warn("tracking expiry: {}", n.status().message());
                      }));
}

}  // namespace bulkhead
