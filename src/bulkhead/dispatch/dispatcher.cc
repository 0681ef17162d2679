#include "bulkhead/dispatch/dispatcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "bulkhead/dispatch/log_done.h"
#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

constexpr size_t kAdoptPage = 1000;
// Shortest timer delay: a wakeup that is already due must not turn the loop into a spin.
constexpr auto kMinTimerDelay = std::chrono::milliseconds(10);
constexpr Duration kEvictEvery = std::chrono::minutes(1);

}  // namespace

Dispatcher::Dispatcher(boost::asio::io_context& io, Engine& engine, Transport& transport,
                       VapidSigner* signer, const KeyRing& keys, const Clock& clock, Rng& rng,
                       DispatcherConfig config)
    : io_(io),
      engine_(engine),
      signer_(signer),
      keys_(keys),
      clock_(clock),
      config_(std::move(config)),
      compartments_(config_.compartments, rng),
      outcomes_(engine, clock, config_.outcomes_queue, stats_, config_.outcome_args),
      host_states_(engine.store(), compartments_, outcomes_, clock),
      runner_(AttemptRunner::Parts{engine, transport, signer, keys, clock, compartments_,
                                   host_states_, outcomes_, config_, stats_}),
      timer_(io),
      host_labels_(clock, config_.host_labels) {
  if (engine.store().cluster().shared()) {
    // The lease outlives any attempt, so a probe never outlives the lease it runs under.
    Duration lease = std::max({config_.webpush_deadlines.total, config_.activitypub_deadlines.total,
                               config_.webhook_deadlines.total}) +
                     std::chrono::seconds(5);
    shared_hosts_ = std::make_unique<SharedHostStates>(engine.store(), compartments_, host_states_,
                                                       clock, lease, [this, alive = alive_] {
                                                         boost::asio::post(io_, [this, alive] {
                                                           if (*alive) Pump();
                                                         });
                                                       });
    host_states_.SetAfterResultObserver(
        [this](const std::string& host, TimePoint now) { shared_hosts_->AfterResult(host, now); });
  }
}

Dispatcher::~Dispatcher() {
  if (started_) engine_.store().cluster().SetNodeCountHandler(nullptr);
  *alive_ = false;
  timer_.cancel();
}

void Dispatcher::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  adopting_ = true;
  taking_ = true;
  if (shared_hosts_) shared_hosts_->Start();
  ApplyNodeCount(engine_.store().cluster().live_nodes());
  engine_.store().cluster().SetNodeCountHandler([this, alive = alive_](size_t nodes) {
    if (!*alive) return;
    ApplyNodeCount(nodes);
    Pump();  // a grown share starts what waited
  });
  // `done` may run inside Restore: adoption continues on a later turn of the loop.
  host_states_.Restore([this, alive = alive_] {
    boost::asio::post(io_, [this, alive] {
      if (!*alive) return;
      taking_ = false;
      Adopt(0);
    });
  });
}

void Dispatcher::ApplyNodeCount(size_t nodes) {
  const int n = static_cast<int>(std::clamp<size_t>(nodes, 1, 1'000'000));
  if (n == compartments_.nodes()) return;
  compartments_.SetNodes(n);
  spdlog::info(
      "delivery: {} nodes share the store: this node's caps are {} in flight in all, {}..{} per "
      "host",
      n, compartments_.global_max_in_flight(), compartments_.host_cap_min(),
      compartments_.host_cap_max());
}

void Dispatcher::Stop() {
  stopped_ = true;
  timer_.cancel();
  next_wakeup_.reset();
}

bool Dispatcher::Handles(std::string_view jobtype) const {
  return JobKindFromName(jobtype).has_value() || ExtensionFor(jobtype) != nullptr;
}

DeliveryExtension* Dispatcher::ExtensionFor(std::string_view jobtype) const {
  for (DeliveryExtension* e : extensions_) {
    if (e->Handles(jobtype)) return e;
  }
  return nullptr;
}

Status Dispatcher::Validate(const JobRecord& job) const {
  auto parsed = ParseDeliveryJob(job, config_.jobs, &keys_, ExtensionFor(job.jobtype));
  if (!parsed.ok()) return parsed.status();
  if (parsed->extension) return Status::Ok();
  if (parsed->kind == JobKind::kWebPush && !signer_) {
    return Status::FailedPrecondition("webpush: the server has no VAPID key");
  }
  return Status::Ok();
}

void Dispatcher::OnJobsAvailable() { Pump(); }

void Dispatcher::Adopt(size_t offset) {
  if (engine_.store().cluster().shared()) {
    // Other live nodes' deliveries are in the shared working set too; a dead node's come back to
    // the delivery queue through the store's liveness reaper instead (no retry spent).
    adopting_ = false;
    Pump();
    return;
  }
  taking_ = true;
  engine_.store().List(
      JobState::kWorking, offset, kAdoptPage,
      [this, alive = alive_, offset](Result<std::vector<JobRecord>> page) {
        if (!*alive) return;
        taking_ = false;
        size_t n = 0;
        if (!page.ok()) {
          spdlog::error("delivery: cannot list reservations to adopt: {}", page.status().message());
        } else {
          n = page->size();
          for (auto& rec : *page) {
            if (rec.queue != kDeliveryQueue) continue;
            ++stats_.adopted;
            Accept(std::move(rec));
          }
        }
        // This may run inside List: the next page (or the first Pump) follows on a later turn.
        boost::asio::post(io_, [this, alive, offset, n] {
          if (!*alive) return;
          if (n == kAdoptPage) {
            Adopt(offset + n);
            return;
          }
          adopting_ = false;
          if (stats_.adopted > 0) {
            spdlog::info("delivery: adopted {} reservations from before the restart",
                         stats_.adopted);
          }
          Pump();
        });
      });
}

void Dispatcher::Pump() {
  // While adopting, the working set must not change under the paged listing; the end of the
  // adoption pumps.
  if (!started_ || stopped_ || adopting_) return;
  if (pumping_) {
    pump_again_ = true;
    return;
  }
  pumping_ = true;
  TimePoint now;
  do {
    pump_again_ = false;
    TakeAvailable();
    now = clock_.Now();
    ExpireDue(now);
    RenewDue(now);
    if (shared_hosts_) shared_hosts_->GateProbes(now);
    StartGranted(now);
  } while (pump_again_ && !stopped_);
  pumping_ = false;
  if (now - evicted_at_ >= kEvictEvery) {
    evicted_at_ = now;
    if (compartments_.EvictIdle(now) > 0) host_states_.SaveEvicted(now);
  }
  ArmTimer(now);
}

void Dispatcher::TakeAvailable() {
  // A degraded store hands out no job (its refusal would be logged at every wake-up).
  if (taking_ || stopped_ || held_.size() >= config_.max_held || engine_.store().degraded()) return;
  taking_ = true;
  engine_.store().Fetch({kDeliveryQueue}, clock_.Now(),
                        [this, alive = alive_](Result<std::optional<JobRecord>> r) {
                          if (!*alive) return;
                          taking_ = false;
                          if (!r.ok() && take_failing_ != r.status().message()) {
                            take_failing_ = r.status().message();
                            spdlog::error("delivery: cannot take jobs: {}", take_failing_);
                          } else if (r.ok() && !take_failing_.empty()) {
                            take_failing_.clear();
                            spdlog::info("delivery: taking jobs again");
                          }
                          const bool got = r.ok() && r->has_value();
                          if (got) {
                            took_ = true;
                            Accept(std::move(**r));
                          }
                          // This may run inside Fetch: continue on a later turn of the loop.
                          boost::asio::post(io_, [this, alive, got] {
                            if (*alive) TookOne(got);
                          });
                        });
}

void Dispatcher::TookOne(bool got) {
  if (got && !taking_) {
    TakeAvailable();
    if (taking_) return;  // the next job is on its way
  }
  // The run of takes has ended (the queue is empty, or no more may be held): start what it took.
  if (took_) {
    took_ = false;
    Pump();
  }
}

void Dispatcher::Accept(JobRecord record) {
  ++stats_.taken;
  auto parsed = ParseDeliveryJob(record, config_.jobs, &keys_, ExtensionFor(record.jobtype));
  if (!parsed.ok()) {
    // Accepted at PUSH but unreadable now (e.g. allow_private_targets or a key was removed since).
    runner_.Dead(ReadRefusedDeliveryJob(record), "InvalidDeliveryJob",
                 std::string(parsed.status().message()), 0);
    return;
  }
  const TimePoint reserved_until = FromUnixMicros(record.score);  // kWorking: the expiry
  held_.Add(std::move(*parsed), reserved_until,
            std::chrono::seconds(std::max(record.reserve_for_s, 60)));
}

void Dispatcher::RenewDue(TimePoint now) {
  // A degraded store refuses renewals (logged once when it failed); they wait for the restart.
  if (engine_.store().degraded()) return;
  for (auto& renewal : held_.RenewDue(now)) {
    ++stats_.renewed;
    engine_.store().ExtendReservation(renewal.jid, renewal.reserved_until,
                                      LogDone("reservation renewal", renewal.jid));
  }
}

void Dispatcher::ExpireDue(TimePoint now) {
  while (auto expired = held_.PopExpired(now)) {
    const DeliveryJob& job = expired->held.job;
    if (!expired->was_fresh) {
      if (Compartment* c = compartments_.Find(job.host)) c->Unpark(job.jid);
    }
    runner_.Expire(job);
  }
}

void Dispatcher::StartGranted(TimePoint now) {
  std::vector<Grant> grants = compartments_.Schedule(held_.FreshDemand(), now);
  for (auto& grant : grants) {
    std::optional<std::string> jid =
        grant.parked_job_id ? grant.parked_job_id : held_.PopFresh(grant.host);
    HeldJob* held = jid ? held_.Find(*jid) : nullptr;
    if (held == nullptr || held->in_flight) {
      // Nothing to run with this grant (should not happen): give the slot back.
      compartments_.OnResult(grant, Outcome{OutcomeClass::kRetryable, HostSignal::kNone, "unused"},
                             Duration::zero(), now);
      continue;
    }
    Launch(*held, std::move(grant), now);
  }
  ParkFresh(now);
}

void Dispatcher::ParkFresh(TimePoint now) {
  // Whatever may not start now waits parked in its host's compartment, still reserved.
  for (auto& [host, queue] : held_.TakeFresh()) {
    for (const auto& jid : queue) {
      Status s = compartments_.Park(host, jid, now);
      if (s.ok() || held_.Find(jid) == nullptr) continue;
      // The host's backlog is full: hand the job back to the retry schedule.
      HeldJob dropped = held_.Forget(jid);
      runner_.ReturnForRetry(dropped.job, "HostBacklogFull", std::string(s.message()));
    }
  }
}

void Dispatcher::BuildOnWorkers(size_t threads, RequestBuilder::BuildFn build) {
  if (!build) build = [this](const DeliveryJob& job) { return runner_.Build(job); };
  builder_ = std::make_unique<RequestBuilder>(io_, threads, std::move(build));
}

void Dispatcher::Launch(HeldJob& held, Grant grant, TimePoint now) {
  held_.MarkInFlight(held, std::move(grant), now);
  const std::string jid = held.job.jid;
  if (builder_ && !held.job.extension) {
    builder_->Build(held.job, [this, alive = alive_, jid](Result<HttpRequest> request) {
      if (*alive) OnBuilt(jid, std::move(request));
    });
    return;
  }
  // `held` stays valid through Send: the answer never runs inside it.
  Status sent = runner_.Send(held.job, [this, alive = alive_, jid](HttpResponse response) {
    if (!*alive) return;
    OnResponse(jid, std::move(response));
  });
  if (!sent.ok()) {
    HeldJob dropped = held_.Forget(jid);
    runner_.Refused(dropped.job, *dropped.grant, sent, now);
  }
}

void Dispatcher::OnBuilt(const std::string& jid, Result<HttpRequest> request) {
  HeldJob* held = held_.Find(jid);
  if (held == nullptr || !held->in_flight) return;
  TimePoint now = clock_.Now();
  if (stopped_) {
    // Shutting down: nothing is sent; the job stays reserved and is adopted at the next start.
    std::optional<HeldJob> taken = held_.TakeInFlight(jid);
    runner_.Release(*taken->grant, taken->started, now);
    return;
  }
  if (!request.ok()) {
    HeldJob dropped = held_.Forget(jid);
    runner_.Refused(dropped.job, *dropped.grant, request.status(), now);
    PumpSoon();
    return;
  }
  runner_.SendBuilt(held->job, std::move(*request), [this, alive = alive_, jid](HttpResponse r) {
    if (!*alive) return;
    OnResponse(jid, std::move(r));
  });
}

void Dispatcher::OnResponse(const std::string& jid, HttpResponse response) {
  TimePoint now = clock_.Now();
  std::optional<HeldJob> taken = held_.TakeInFlight(jid);
  if (!taken) return;
  HeldJob& held = *taken;
  if (stopped_ && response.error == TransportError::kCancelled) {
    // Shutting down: the job stays reserved and is adopted at the next start.
    runner_.Release(*held.grant, held.started, now);
    return;
  }
  runner_.Conclude(held.job, *held.grant, held.started, response, now);
  PumpSoon();
}

void Dispatcher::PumpSoon() {
  // Answers that arrive together (one turn of the loop) share one Pump: each Pump looks at every
  // host with parked jobs, so one per answer made that walk the largest cost of a saturated loop.
  if (pump_posted_) return;
  pump_posted_ = true;
  boost::asio::post(io_, [this, alive = alive_] {
    if (!*alive) return;
    pump_posted_ = false;
    Pump();
  });
}

void Dispatcher::ArmTimer(TimePoint now) {
  std::optional<TimePoint> next = compartments_.NextWakeup(now);
  if (auto due = held_.NextDue(); due && (!next || *due < *next)) next = due;
  next_wakeup_ = next;
  if (!next) {
    timer_.cancel();
    return;
  }
  auto delay = std::chrono::duration_cast<std::chrono::steady_clock::duration>(*next - now);
  timer_.expires_after(std::max<std::chrono::steady_clock::duration>(delay, kMinTimerDelay));
  timer_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (ec || !*alive) return;
    Pump();
  });
}

DeliverySnapshot Dispatcher::Snapshot() const { return Collect(clock_.Now()); }

void Dispatcher::PublishSnapshot() { published_.Publish(Collect(clock_.Now())); }

DeliverySnapshot Dispatcher::Collect(TimePoint now) const {
  DeliverySnapshot s;
  s.at = now;
  s.hosts = compartments_.Snapshot(now);
  for (const auto& h : s.hosts) s.parked += h.parked;
  s.held = held_.size();
  s.in_flight = compartments_.global_in_flight();
  s.max_in_flight = compartments_.global_max_in_flight();
  s.cluster_nodes = compartments_.nodes();
  s.host_cap_max = compartments_.host_cap_max();
  s.host_cap_min = compartments_.host_cap_min();
  s.stats = stats();
  return s;
}

Status Dispatcher::RegisterMetrics(Registry& registry) {
  auto deliveries =
      registry.AddCounter(mn::kDeliveriesTotal, mn::kDeliveriesTotalHelp,
                          {std::string(mn::kLabelHost), std::string(mn::kLabelOutcome)});
  if (!deliveries.ok()) return deliveries.status();
  auto latency = registry.AddHistogram(mn::kDeliveryLatencySeconds, mn::kDeliveryLatencySecondsHelp,
                                       {std::string(mn::kLabelHost)}, mn::kDeliveryLatencyBuckets);
  if (!latency.ok()) return latency.status();
  runner_.CountAttemptsIn(*deliveries, *latency, &host_labels_);
  return Status::Ok();
}

}  // namespace bulkhead
