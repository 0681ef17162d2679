#include "bulkhead/engine/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bulkhead {
namespace {

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
      store_(store),
      config_(config),
      clock_(clock),
      retry_policy_([&config](const std::string& jt) { return config.RetryFor(jt); }, rng,
                    std::chrono::hours(24) * config.dead_ttl_days),
      started_at_(clock.Now()),
      waiters_(io, clock, *this),
      periodic_(io, store, config, clock, workers_,
                PeriodicTasks::Hooks{
                    .wake = [this](const std::string& q, size_t n) { WakeWaiters(q, n); },
                    .reservation_expired = [this](JobRecord job) { FailExpired(std::move(job)); },
                    .worker_reaped =
                        [this](const std::string& wid) {
                          if (on_worker_reaped_) on_worker_reaped_(wid);
                        }}),
      cluster_(store.cluster(), workers_,
               [this](const std::string& queue, size_t count) { WakeWaiters(queue, count); }),
      batches_(store, clock, rng, [&config](const std::string& jt) { return config.RetryFor(jt); }),
      tracking_(store, clock) {
  cron_ = std::make_unique<CronScheduler>(
      io, clock, store, config.cron, rng,
      [this](JobRecord job, Done done) { Push(std::move(job), std::move(done)); });
}

Engine::~Engine() { Stop(); }

void Engine::Start() {
  periodic_.Start();
  cron_->Start();
}

void Engine::Stop() {
  if (stopped_) return;
  stopped_ = true;
  cron_->Stop();
  periodic_.Stop();
  throttle_timer_.Cancel();
  throttle_timer_at_.reset();
  // Answer every waiting FETCH with "no job" so clients are not left hanging.
  waiters_.AnswerAll();
}

// --- PUSH: validate, the job's kind, its route (unique | batch | plain), then what follows ---

void Engine::Push(JobRecord job, Done done) {
  PushRoute route;
  if (Status valid = ValidatePush(job, route); !valid.ok()) return done(valid);
  if (Status kind = ApplyJobKind(job); !kind.ok()) return done(kind);
  const std::string jid = job.jid;
  const std::string queue = job.queue;
  const bool queued = job.state == JobState::kQueued;
  const bool tracked = !job.no_custom && Tracking::IsTracked(job.payload);
  RoutePush(std::move(job), std::move(route), AnswerPush(jid, std::move(done)));
  AfterPush(jid, queue, queued, tracked);
}

Status Engine::ValidatePush(JobRecord& job, PushRoute& route) {
  // A store that cannot be reached answers every call Unavailable: say so before validating (a
  // delivery naming a signing key would otherwise be refused for a key ring not loaded yet).
  if (std::string why = store_.unavailable_reason(); !why.empty()) {
    return Status::Unavailable(std::move(why));
  }
  if (job.no_custom) return Status::Ok();  // no options: no lock, no batch
  if (Status options = ReadPushOptions(job, route.lock); !options.ok()) return options;
  route.bid = Batches::BatchIdOf(job.payload);
  if (route.lock && !route.bid.empty()) {
    // The store has no atomic step for both (docs/unique-expiring-cron.md).
    return Status::InvalidArgument(
        "custom.unique_for: a job that joins a batch (custom.bid) cannot also be unique");
  }
  return Status::Ok();
}

Status Engine::ApplyJobKind(JobRecord& job) {
  if (!builtin_ || !builtin_->Handles(job.jobtype)) return Status::Ok();
  if (Status valid = builtin_->Validate(job); !valid.ok()) return valid;
  job.queue = kDeliveryQueue;  // the payload keeps the queue the client named
  // The dispatcher holds a delivery's reservation while the job waits parked behind its host's
  // breaker; its own deadlines end it long before this, and at start-up it adopts the
  // reservations it held before a restart.
  job.reserve_for_s = 86400;
  return Status::Ok();
}

Engine::Done Engine::AnswerPush(const std::string& jid, Done done) {
  // While this PUSH commits, a PUSH of the same jid waits for its outcome (PushDuplicate).
  bool registered = unconfirmed_pushes_.try_emplace(jid).second;
  return alive_.Guard([this, jid, registered, done = std::move(done)](Status st) mutable {
    bool held_before = st.code() == StatusCode::kAlreadyExists;
    if (registered) {
      auto it = unconfirmed_pushes_.find(jid);
      std::vector<Done> waiting = std::move(it->second);
      unconfirmed_pushes_.erase(it);
      // A jid held before this PUSH: the duplicates that waited on it are answered as it is.
      for (auto& d : waiting) d(held_before ? Status::Ok() : st);
    }
    if (held_before) {
      PushDuplicate(jid, std::move(done));
      return;
    }
    done(st);
  });
}

void Engine::AfterPush(const std::string& jid, const std::string& queue, bool queued,
                       bool tracked) {
  if (tracked) {  // right after the Push: no FETCH of the job comes between (store.h)
    store_.tracks().Pushed(jid, clock_.Now(), alive_.Guard([jid](Status s) {
      if (!s.ok()) spdlog::warn("job {}: tracking not started: {}", jid, s.message());
    }));
  }
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

// --- FETCH: the waiters (fetch_waiters.h) and where their jobs come from ---

uint64_t Engine::Fetch(std::vector<std::string> queues, const std::string& wid, FetchCallback cb) {
  if (!wid.empty() && workers_.StateOf(wid) != WorkerState::kRunning) {
    queues.clear();  // a quiet or terminating worker gets no more jobs: wait, then $-1
  }
  return waiters_.Add(std::move(queues), wid, std::chrono::milliseconds(config_.fetch_block_ms),
                      std::move(cb));
}

void Engine::CancelFetch(uint64_t ticket) { waiters_.Cancel(ticket); }

void Engine::TakeJob(const std::vector<std::string>& queues, const std::string& wid,
                     Store::JobCallback cb) {
  std::vector<QueueThrottle> throttles = throttles_.Of(queues);
  // A worker's FETCH records the worker as the job's holder in the same store step.
  if (throttles.empty() && !wid.empty()) {
    store_.FetchFor(queues, wid, clock_.Now(), std::move(cb));
  } else if (throttles.empty()) {
    store_.Fetch(queues, clock_.Now(), std::move(cb));
  } else {
    store_.throttles().Fetch(queues, ThrottledFetch{std::move(throttles), wid}, clock_.Now(),
                             std::move(cb));
  }
}

bool Engine::AdmitJob(const JobRecord& job) {
  if (throttles_.Find(job.queue)) OnSlotTaken(job.queue, clock_.Now());
  return AdmitFetched(job);
}

void Engine::ReturnJob(JobRecord job) {
  if (throttles_.Find(job.queue)) OnSlotTaken(job.queue, clock_.Now());
  spdlog::debug("job {} was reserved for a FETCH that is gone: back to queue {}", job.jid,
                job.queue);
  std::string jid = job.jid;
  std::string queue = job.queue;
  job.state = JobState::kQueued;
  store_.Move(std::move(job), clock_.Now(), alive_.Guard([jid](Status s) {
    if (!s.ok()) {
      spdlog::warn("job {} stays reserved until its reservation expires: {}", jid, s.message());
    }
  }));
  WakeWaiters(queue, 1);
}

void Engine::WakeWaiters(const std::string& queue, size_t count) {
  if (queue == kDeliveryQueue) {
    if (builtin_) builtin_->OnJobsAvailable();
    return;
  }
  waiters_.Wake(queue, count);
}

// --- ACK and FAIL ---

void Engine::Ack(const std::string& jid, Done done) {
  TimePoint now = clock_.Now();
  store_.Ack(jid, now,
             alive_.Guard([this, jid, now,
                           done = std::move(done)](Result<std::optional<JobRecord>> found) {
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
  store_.GetWorking(jid,
                    alive_.Guard([this, jid, report = std::move(report), done = std::move(done),
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

void Engine::FailExpired(JobRecord job) {
  std::string jid = job.jid;
  FailReserved(std::move(job),
               FailureReport{"ReservationExpired", "Faktory job reservation expired", {}},
               [jid](Status s) {
                 if (s.code() == StatusCode::kNotFound) {
                   spdlog::debug("reaper: job {} was acked or failed before it was moved", jid);
                 } else if (!s.ok()) {
                   spdlog::error("reaper: {}", s.message());
                 }
               });
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
      alive_.Guard([this, job = std::move(job), report = std::move(report), dead, failed, now,
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

// --- Workers and admin ---

Result<WorkerState> Engine::Beat(const std::string& wid, const std::string& reported_state,
                                 int64_t rss_kb) {
  return workers_.Beat(wid, reported_state, rss_kb, clock_.Now());
}

Status Engine::SignalWorker(const std::string& wid, WorkerState state) {
  return cluster_.SignalWorker(wid, state);
}

void Engine::ClusterWorkers(std::function<void(Result<std::vector<NodeWorker>>)> cb) {
  cluster_.ClusterWorkers(std::move(cb));
}

void Engine::Flush(Done done) { store_.Flush(std::move(done)); }

void Engine::Mutate(MutateOp op, JobState set, MutateFilter filter, Done done) {
  store_.Mutate(op, set, filter, clock_.Now(), std::chrono::hours(24) * config_.dead_ttl_days,
                alive_.Guard([this, op, done = std::move(done)](Result<size_t> n) {
                  if (!n.ok()) {
                    done(n.status());
                    return;
                  }
                  if (op == MutateOp::kRequeue && *n > 0) {
                    // Requeued jobs may be for any queue: let every waiter look.
                    for (const auto& q : waiters_.Queues()) WakeWaiters(q, *n);
                  }
                  done(Status::Ok());
                }));
}

void Engine::PauseQueues(const std::vector<std::string>& queues, bool paused, Done done) {
  store_.SetPaused(queues, paused,
                   alive_.Guard([this, queues, paused, done = std::move(done)](Status s) {
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
  store_.Stats(alive_.Guard([this, queues, cb = std::move(cb)](Result<StoreStats> stats) {
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

// --- Snapshot ---

void Engine::Snapshot(std::function<void(Result<EngineSnapshot>)> cb) {
  store_.Stats(alive_.Guard([this, cb = std::move(cb)](Result<StoreStats> stats) {
    if (!stats.ok()) {
      cb(stats.status());
      return;
    }
    EngineSnapshot out = SnapshotOf(*stats);
    store_.batches().Counts(alive_.Guard(
        [this, out = std::move(out), cb = std::move(cb)](Result<BatchCounts> batches) mutable {
          if (!batches.ok()) return cb(batches.status());
          out.batches = *batches;
          AddThrottleUses(std::move(out), std::move(cb));
        }));
  }));
}

EngineSnapshot Engine::SnapshotOf(const StoreStats& stats) const {
  EngineSnapshot out;
  out.now = clock_.Now();
  out.started_at = started_at_;
  out.store = std::string(store_.Name());
  out.store_degraded = store_.degraded();
  int64_t now_us = ToUnixMicros(out.now);
  for (const auto& [name, q] : stats.queues) {
    out.queues[name] =
        QueueSnapshot{q.size, q.paused, QueueLatencySeconds(q.oldest_enqueued_us, now_us)};
  }
  out.scheduled = stats.scheduled;
  out.retries = stats.retries;
  out.dead = stats.dead;
  out.working = stats.working;
  out.enqueued = stats.enqueued;
  out.processed = stats.processed;
  out.failures = stats.failures;
  out.push_duplicates = push_duplicates();
  out.tasks = periodic_.snapshots();
  out.worker_count = workers_.size();
  out.unique = unique_counts_;
  out.jobs_expired = expired_by_queue_;
  out.cron = cron_->Snapshot(out.now);
  return out;
}

}  // namespace bulkhead
