#include "bulkhead/dispatch/dispatcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/compartment/outcome.h"
#include "bulkhead/compartment/retry_after.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

constexpr size_t kAdoptPage = 1000;
// Shortest timer delay: a wakeup that is already due must not turn the loop into a spin.
constexpr auto kMinTimerDelay = std::chrono::milliseconds(10);
constexpr Duration kSnapshotEvery = std::chrono::seconds(1);
constexpr Duration kEvictEvery = std::chrono::minutes(1);

// The `outcome` label of bulkhead_deliveries_total for one attempt.
std::string_view OutcomeLabel(const HttpResponse& r) {
  switch (r.error) {
    case TransportError::kNone:
      break;
    case TransportError::kConnectTimeout:
    case TransportError::kTimeoutFirstByte:
    case TransportError::kTimeoutTotal:
    case TransportError::kLowSpeed:
      return mn::kOutcomeTimeout;
    default:
      return mn::kOutcomeNetworkError;
  }
  if (r.status >= 200 && r.status < 300) return mn::kOutcomeSuccess;
  if (r.status >= 500) return mn::kOutcomeServerError;
  return mn::kOutcomeClientError;
}

Engine::Done LogDone(std::string what, std::string jid) {
  return [what = std::move(what), jid = std::move(jid)](Status s) {
    if (!s.ok()) spdlog::warn("delivery {}: {} failed: {}", jid, what, s.message());
  };
}

double Millis(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

int64_t ToStoredTime(const std::optional<TimePoint>& t) { return t ? ToUnixMicros(*t) : 0; }

std::optional<TimePoint> FromStoredTime(int64_t us) {
  if (us == 0) return std::nullopt;
  return FromUnixMicros(us);
}

HostStateRecord ToRecord(const std::string& host, const CompartmentState& state, bool unavailable) {
  HostStateRecord r;
  r.host = host;
  r.breaker_open_until_us = ToStoredTime(state.breaker_open_until);
  r.breaker_series_openings = state.breaker_series_openings;
  r.breaker_openings = state.breaker_openings;
  r.failing_since_us = ToStoredTime(state.failing_since);
  r.unavailable = unavailable;
  r.retry_after_until_us = ToStoredTime(state.retry_after_until);
  return r;
}

CompartmentState ToCompartmentState(const HostStateRecord& r) {
  CompartmentState s;
  s.breaker_open_until = FromStoredTime(r.breaker_open_until_us);
  s.breaker_series_openings = r.breaker_series_openings;
  s.breaker_openings = r.breaker_openings;
  s.failing_since = FromStoredTime(r.failing_since_us);
  s.retry_after_until = FromStoredTime(r.retry_after_until_us);
  return s;
}

}  // namespace

void ApplyDeliveryDefaults(Config& config) {
  auto& webpush = config.jobtypes[std::string(JobKindName(JobKind::kWebPush))];
  if (!webpush.retry) webpush.retry = kDefaultWebPushRetry;
  auto& activitypub = config.jobtypes[std::string(JobKindName(JobKind::kActivityPub))];
  if (!activitypub.retry) activitypub.retry = kDefaultActivityPubRetry;
}

const Deadlines& DispatcherConfig::DeadlinesFor(JobKind kind) const {
  switch (kind) {
    case JobKind::kWebPush:
      return webpush_deadlines;
    case JobKind::kActivityPub:
      return activitypub_deadlines;
    case JobKind::kWebhook:
      break;
  }
  return webhook_deadlines;
}

namespace {

Deadlines ToDeadlines(const DeliveryKindSettings& k) {
  Deadlines d;
  d.connect = std::chrono::milliseconds(k.connect_timeout_ms);
  d.first_byte = std::chrono::milliseconds(k.first_byte_timeout_ms);
  d.total = std::chrono::milliseconds(k.total_timeout_ms);
  d.low_speed_limit = k.low_speed_bytes_per_second;
  d.low_speed_time = std::chrono::seconds(k.low_speed_seconds);
  return d;
}

}  // namespace

DispatcherConfig MakeDispatcherConfig(const Config& config) {
  const DeliverySettings& d = config.delivery;
  DispatcherConfig dc;
  dc.outcomes_queue = config.delivery_outcomes_queue;
  dc.jobs.allow_private_targets = config.allow_private_targets;
  dc.jobs.activitypub_deadline = std::chrono::hours(d.activitypub.deadline_hours);
  dc.jobs.webhook_deadline = std::chrono::hours(d.webhook.deadline_hours);
  dc.max_retry_after = std::chrono::seconds(d.max_retry_after_seconds);
  dc.webpush_deadlines = ToDeadlines(d.webpush);
  dc.activitypub_deadlines = ToDeadlines(d.activitypub);
  dc.webhook_deadlines = ToDeadlines(d.webhook);
  HostCompartmentsConfig& registry = dc.compartments;
  registry.global_max_in_flight = d.global_max_in_flight;
  CompartmentConfig& compartment = registry.compartment;
  compartment.limit.initial_limit = d.host_cap_initial;
  compartment.limit.min_limit = d.host_cap_min;
  compartment.limit.max_limit = d.host_cap_max;
  compartment.breaker.failure_threshold = d.breaker_failure_threshold;
  compartment.breaker.base_open_interval = std::chrono::seconds(d.breaker_open_min_seconds);
  compartment.breaker.max_open_interval = std::chrono::seconds(d.breaker_open_max_seconds);
  compartment.unavailable_after = std::chrono::hours(24 * d.unavailable_after_days);
  compartment.slow_call_threshold = std::chrono::milliseconds(d.slow_call_threshold_ms);
  // A host failing longer than the unavailable period keeps its verdict while jobs keep coming.
  registry.failing_retention =
      std::max(registry.failing_retention, compartment.unavailable_after + std::chrono::hours(24));
  return dc;
}

Dispatcher::Dispatcher(boost::asio::io_context& io, Engine& engine, Transport& transport,
                       VapidSigner* signer, const KeyRing& keys, const Clock& clock, Rng& rng,
                       DispatcherConfig config)
    : io_(io),
      engine_(engine),
      transport_(transport),
      signer_(signer),
      keys_(keys),
      clock_(clock),
      config_(std::move(config)),
      registry_(config_.compartments, rng),
      timer_(io),
      host_labels_(clock, config_.host_labels) {}

Dispatcher::~Dispatcher() {
  *alive_ = false;
  timer_.cancel();
  if (metrics_registry_) {
    for (auto name : {mn::kHostInflight, mn::kHostCap, mn::kHostBreakerOpen, mn::kParkedJobs}) {
      (void)metrics_registry_->RemoveCallback(name);
    }
  }
}

void Dispatcher::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  adopting_ = true;
  RestoreHosts();
}

void Dispatcher::Stop() {
  stopped_ = true;
  timer_.cancel();
  next_wakeup_.reset();
}

bool Dispatcher::Handles(std::string_view jobtype) const {
  return JobKindFromName(jobtype).has_value();
}

Status Dispatcher::Validate(const JobRecord& job) const {
  auto parsed = ParseDeliveryJob(job, config_.jobs, &keys_);
  if (!parsed.ok()) return parsed.status();
  if (parsed->kind == JobKind::kWebPush && !signer_) {
    return Status::FailedPrecondition("webpush: the server has no VAPID key");
  }
  return Status::Ok();
}

void Dispatcher::OnJobsAvailable() { Pump(); }

void Dispatcher::RestoreHosts() {
  taking_ = true;
  auto returned = std::make_shared<bool>(false);
  engine_.store().ListHostStates([this, alive = alive_,
                                  returned](Result<std::vector<HostStateRecord>> records) {
    if (!*alive) return;
    taking_ = false;
    if (!records.ok()) {
      spdlog::error("delivery: cannot read the saved host states: {}", records.status().message());
    } else {
      const TimePoint now = clock_.Now();
      for (auto& record : *records) {
        CompartmentState state = ToCompartmentState(record);
        if (!state.healthy()) registry_.Restore(record.host, state, now);
        if (record.unavailable) unavailable_hosts_.insert(record.host);
        saved_hosts_.insert_or_assign(record.host, std::move(record));
      }
      if (!records->empty()) {
        spdlog::info("delivery: restored the state of {} failing hosts", records->size());
      }
    }
    // Answered inline: continue after ListHostStates returns, not inside it.
    if (*returned) {
      Adopt(0);
    } else {
      boost::asio::post(io_, [this, alive] {
        if (*alive) Adopt(0);
      });
    }
  });
  *returned = true;
}

void Dispatcher::Adopt(size_t offset) {
  taking_ = true;
  auto returned = std::make_shared<bool>(false);
  engine_.store().List(
      JobState::kWorking, offset, kAdoptPage,
      [this, alive = alive_, offset, returned](Result<std::vector<JobRecord>> page) {
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
        auto next = [this, offset, n] {
          if (n == kAdoptPage) {
            Adopt(offset + n);
          } else {
            adopting_ = false;
            if (stats_.adopted > 0) {
              spdlog::info("delivery: adopted {} reservations from before the restart",
                           stats_.adopted);
            }
            Pump();
          }
        };
        // Answered inline: continue after List returns, not inside it.
        if (*returned) {
          next();
        } else {
          boost::asio::post(io_, [alive, next] {
            if (*alive) next();
          });
        }
      });
  *returned = true;
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
    StartGranted(now);
  } while (pump_again_ && !stopped_);
  pumping_ = false;
  if (now - evicted_at_ >= kEvictEvery) {
    evicted_at_ = now;
    if (registry_.EvictIdle(now) > 0) SaveEvictedHosts(now);
  }
  ArmTimer(now);
  RefreshSnapshot(now, false);
}

void Dispatcher::TakeAvailable() {
  struct Call {
    bool returned = false;
    bool got = false;
  };
  // A degraded store hands out no job (its refusal would be logged at every wake-up).
  while (!taking_ && !stopped_ && jobs_.size() < config_.max_held && !engine_.store().degraded()) {
    auto call = std::make_shared<Call>();
    taking_ = true;
    engine_.store().Fetch({kDeliveryQueue}, clock_.Now(),
                          [this, alive = alive_, call](Result<std::optional<JobRecord>> r) {
                            if (!*alive) return;
                            taking_ = false;
                            bool got = r.ok() && r->has_value();
                            if (!r.ok())
                              spdlog::error("delivery: cannot take jobs: {}", r.status().message());
                            if (got) Accept(std::move(**r));
                            if (call->returned) {
                              if (got) Pump();  // a deferred answer: keep taking
                            } else {
                              call->got = got;
                            }
                          });
    call->returned = true;
    if (taking_ || !call->got) break;
  }
}

void Dispatcher::Accept(JobRecord record) {
  ++stats_.taken;
  auto parsed = ParseDeliveryJob(record, config_.jobs, &keys_);
  if (!parsed.ok()) {
    // Accepted at PUSH but unreadable now (e.g. allow_private_targets or a key was removed since).
    DeliveryJob job;
    job.jid = record.jid;
    job.jobtype = record.jobtype;
    Dead(job, "InvalidDeliveryJob", parsed.status().message());
    return;
  }
  const TimePoint reserved_until = FromUnixMicros(record.score);  // kWorking: the expiry
  auto it = jobs_.find(record.jid);
  if (it != jobs_.end()) {
    // Reserved again after its reservation expired while held here: keep the one we hold, under
    // its new reservation.
    if (!it->second.in_flight) {
      CancelRenewal(record.jid, it->second);
      it->second.reserved_until = reserved_until;
      ScheduleRenewal(record.jid, it->second);
    }
    return;
  }
  const std::string jid = parsed->jid;
  const std::string host = parsed->host;
  deadlines_.insert({parsed->deadline, jid});
  Held held;
  held.job = std::move(*parsed);
  held.reserved_until = reserved_until;
  held.reserve_for = std::chrono::seconds(std::max(record.reserve_for_s, 60));
  auto [pos, inserted] = jobs_.emplace(jid, std::move(held));
  ScheduleRenewal(jid, pos->second);
  fresh_[host].push_back(jid);
}

void Dispatcher::ScheduleRenewal(const std::string& jid, Held& held) {
  held.renew_at = held.reserved_until - held.reserve_for / 2;
  renewals_.insert({held.renew_at, jid});
}

void Dispatcher::CancelRenewal(const std::string& jid, const Held& held) {
  renewals_.erase({held.renew_at, jid});
}

Dispatcher::Held Dispatcher::Forget(std::map<std::string, Held>::iterator it) {
  deadlines_.erase({it->second.job.deadline, it->first});
  CancelRenewal(it->first, it->second);
  Held held = std::move(it->second);
  jobs_.erase(it);
  return held;
}

void Dispatcher::RenewDue(TimePoint now) {
  // A degraded store refuses renewals (logged once when it failed); they wait for the restart.
  if (engine_.store().degraded()) return;
  while (!renewals_.empty() && renewals_.begin()->first <= now) {
    std::string jid = renewals_.begin()->second;
    renewals_.erase(renewals_.begin());
    auto it = jobs_.find(jid);
    if (it == jobs_.end() || it->second.in_flight) continue;
    Held& held = it->second;
    held.reserved_until = now + held.reserve_for;
    ScheduleRenewal(jid, held);
    ++stats_.renewed;
    engine_.store().ExtendReservation(jid, held.reserved_until,
                                      LogDone("reservation renewal", jid));
  }
}

void Dispatcher::ExpireDue(TimePoint now) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    std::string jid = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    auto it = jobs_.find(jid);
    if (it == jobs_.end() || it->second.in_flight) continue;
    const std::string& host = it->second.job.host;
    bool removed = false;
    if (auto f = fresh_.find(host); f != fresh_.end()) {
      auto pos = std::find(f->second.begin(), f->second.end(), jid);
      if (pos != f->second.end()) {
        f->second.erase(pos);
        removed = true;
      }
    }
    if (!removed) {
      if (Compartment* c = registry_.Find(host)) c->Unpark(jid);
    }
    DeliveryJob job = Forget(it).job;
    ++stats_.expired;
    Dead(job, "HostUnavailable", "host unavailable");
  }
}

void Dispatcher::StartGranted(TimePoint now) {
  std::vector<HostDemand> demands;
  for (const auto& [host, queue] : fresh_) {
    if (!queue.empty()) demands.push_back({host, static_cast<int>(queue.size())});
  }
  std::vector<Grant> grants = registry_.Schedule(demands, now);
  for (auto& grant : grants) {
    std::string jid;
    if (grant.parked_job_id) {
      jid = *grant.parked_job_id;
    } else {
      auto& queue = fresh_[grant.host];
      if (!queue.empty()) {
        jid = queue.front();
        queue.pop_front();
      }
    }
    auto it = jid.empty() ? jobs_.end() : jobs_.find(jid);
    if (it == jobs_.end() || it->second.in_flight) {
      // Nothing to run with this grant (should not happen): give the slot back.
      registry_.OnResult(grant, Outcome{OutcomeClass::kRetryable, HostSignal::kNone, "unused"},
                         Duration::zero(), now);
      continue;
    }
    Launch(jid, std::move(grant), now);
  }
  // Whatever may not start now waits parked in its host's compartment, still reserved.
  for (auto& [host, queue] : fresh_) {
    for (const auto& jid : queue) {
      Status s = registry_.Park(host, jid, now);
      if (s.ok()) continue;
      auto it = jobs_.find(jid);
      if (it == jobs_.end()) continue;
      // The host's backlog is full: hand the job back to the retry schedule.
      Forget(it);
      ++stats_.retried;
      engine_.Fail(jid, FailureReport{"HostBacklogFull", s.message(), {}}, LogDone("FAIL", jid));
    }
  }
  fresh_.clear();
}

void Dispatcher::Launch(const std::string& jid, Grant grant, TimePoint now) {
  Held& held = jobs_.at(jid);
  deadlines_.erase({held.job.deadline, jid});
  CancelRenewal(jid, held);
  auto request = BuildDeliveryRequest(held.job, signer_, keys_, clock_);
  if (!request.ok()) {
    registry_.OnResult(
        grant, Outcome{OutcomeClass::kPermanent, HostSignal::kNone, request.status().message()},
        Duration::zero(), now);
    DeliveryJob job = Forget(jobs_.find(jid)).job;
    Dead(job, "InvalidDeliveryJob", request.status().message());
    return;
  }
  request->deadlines = config_.DeadlinesFor(held.job.kind);
  held.in_flight = true;
  held.grant = std::move(grant);
  held.started = now;
  ++stats_.attempts;
  transport_.Send(std::move(*request), [this, alive = alive_, jid](HttpResponse response) {
    if (!*alive) return;
    OnResponse(jid, std::move(response));
  });
}

void Dispatcher::OnResponse(const std::string& jid, HttpResponse response) {
  TimePoint now = clock_.Now();
  auto it = jobs_.find(jid);
  if (it == jobs_.end() || !it->second.in_flight) return;
  Held held = Forget(it);
  Grant grant = std::move(*held.grant);
  Duration latency = std::max(Duration::zero(), now - held.started);
  if (stopped_ && response.error == TransportError::kCancelled) {
    // Shutting down: the job stays reserved and is adopted at the next start.
    registry_.OnResult(grant, Outcome{OutcomeClass::kRetryable, HostSignal::kNone, "cancelled"},
                       latency, now);
    return;
  }
  AttemptResult attempt{response.error, response.status};
  Outcome outcome = Classify(held.job.kind, attempt);
  if (!response.ok() && !response.error_message.empty()) {
    outcome.reason += ": " + response.error_message;
  }
  std::optional<TimePoint> retry_after;
  if (response.ok()) {
    if (auto value = response.Header("Retry-After")) {
      retry_after = ParseRetryAfter(*value, now, config_.max_retry_after);
    }
  }
  registry_.OnResult(grant, outcome, latency, now, retry_after);
  CountAttempt(held.job.host, OutcomeLabel(response), latency);
  CheckAvailability(held.job.host, now);
  SaveHostState(held.job.host, now);
  Finish(std::move(held), outcome, retry_after, now);
  Pump();
}

void Dispatcher::Finish(Held held, const Outcome& outcome, std::optional<TimePoint> retry_after,
                        TimePoint now) {
  const DeliveryJob& job = held.job;
  switch (outcome.cls) {
    case OutcomeClass::kOk:
      ++stats_.acked;
      engine_.Ack(job.jid, LogDone("ACK", job.jid));
      return;
    case OutcomeClass::kGone: {
      ++stats_.gone;
      FailOptions options;
      options.discard = true;
      engine_.Fail(job.jid, FailureReport{"SubscriptionGone", outcome.reason, {}},
                   LogDone("FAIL", job.jid), options);
      PushOutcome(kWebPushGoneJobType, nlohmann::json::array({job.url, job.jid}));
      return;
    }
    case OutcomeClass::kPermanent:
      Dead(job, "DeliveryRefused", outcome.reason);
      return;
    case OutcomeClass::kRetryable:
      break;
  }
  if (now >= job.deadline) {
    ++stats_.expired;
    Dead(job, "HostUnavailable", "host unavailable");
    return;
  }
  bool last = LastAttempt(job);
  FailOptions options;
  options.not_before = retry_after;
  engine_.Fail(job.jid, FailureReport{"DeliveryFailed", outcome.reason, {}},
               LogDone("FAIL", job.jid), options);
  if (last) {
    ++stats_.dead;
    PushOutcome(kDeliveryDeadJobType,
                nlohmann::json::array({job.jid, job.jobtype, outcome.reason, job.url}));
  } else {
    ++stats_.retried;
  }
}

void Dispatcher::Dead(const DeliveryJob& job, const std::string& errtype,
                      const std::string& reason) {
  ++stats_.dead;
  FailOptions options;
  options.dead = true;
  engine_.Fail(job.jid, FailureReport{errtype, reason, {}}, LogDone("FAIL", job.jid), options);
  PushOutcome(kDeliveryDeadJobType, nlohmann::json::array({job.jid, job.jobtype, reason, job.url}));
}

bool Dispatcher::LastAttempt(const DeliveryJob& job) const {
  // Mirrors RetryPolicy::Decide: this failure's retry_count is the previous one + 1 (0 at first).
  int retry = job.retry.value_or(engine_.config().RetryFor(job.jobtype));
  int count = job.last_retry_count ? *job.last_retry_count + 1 : 0;
  return retry != 0 && count >= retry;
}

void Dispatcher::PushOutcome(const std::string& jobtype, nlohmann::json args) {
  nlohmann::json doc = {{"jid", RandomHex(12)},
                        {"jobtype", jobtype},
                        {"queue", config_.outcomes_queue},
                        {"args", std::move(args)}};
  auto record = ParseJobDocument(std::move(doc), clock_.Now());
  if (!record.ok()) {
    spdlog::error("delivery: cannot build {} job: {}", jobtype, record.status().message());
    return;
  }
  ++stats_.outcome_jobs;
  engine_.Push(std::move(*record), [jobtype](Status s) {
    if (!s.ok()) spdlog::warn("delivery: push of {} failed: {}", jobtype, s.message());
  });
}

void Dispatcher::CheckAvailability(const std::string& host, TimePoint now) {
  bool unavailable = registry_.IsUnavailable(host, now);
  bool was = unavailable_hosts_.count(host) > 0;
  if (unavailable && !was) {
    unavailable_hosts_.insert(host);
    spdlog::warn("delivery: host {} is unavailable (failing continuously)", host);
    PushOutcome(kHostUnavailableJobType, nlohmann::json::array({host}));
  } else if (!unavailable && was) {
    unavailable_hosts_.erase(host);
    spdlog::info("delivery: host {} is available again", host);
    PushOutcome(kHostAvailableJobType, nlohmann::json::array({host}));
  }
}

void Dispatcher::SaveHostState(const std::string& host, TimePoint now) {
  const Compartment* c = registry_.Find(host);
  const CompartmentState state = c ? c->State(now) : CompartmentState{};
  const bool unavailable = unavailable_hosts_.contains(host);
  auto saved = saved_hosts_.find(host);
  if (state.healthy() && !unavailable) {
    if (saved == saved_hosts_.end()) return;
    saved_hosts_.erase(saved);
    engine_.store().RemoveHostState(host, LogDone("host state removal", host));
    return;
  }
  HostStateRecord record = ToRecord(host, state, unavailable);
  if (saved != saved_hosts_.end() && saved->second == record) return;
  engine_.store().PutHostState(record, LogDone("host state write", host));
  saved_hosts_.insert_or_assign(host, std::move(record));
}

void Dispatcher::SaveEvictedHosts(TimePoint now) {
  std::vector<std::string> evicted;
  for (const auto& [host, record] : saved_hosts_) {
    if (registry_.Find(host) == nullptr) evicted.push_back(host);
  }
  for (const auto& host : evicted) SaveHostState(host, now);
}

void Dispatcher::ArmTimer(TimePoint now) {
  std::optional<TimePoint> next = registry_.NextWakeup(now);
  if (!deadlines_.empty()) {
    TimePoint d = deadlines_.begin()->first;
    if (!next || d < *next) next = d;
  }
  if (!renewals_.empty()) {
    TimePoint r = renewals_.begin()->first;
    if (!next || r < *next) next = r;
  }
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

void Dispatcher::CountAttempt(const std::string& host, std::string_view outcome, Duration latency) {
  if (!deliveries_) return;
  std::string label = host_labels_.RecordAndLabel(host);
  deliveries_->WithLabels({label, std::string(outcome)}).Increment();
  latency_->WithLabels({label}).Observe(std::chrono::duration<double>(latency).count());
}

void Dispatcher::RefreshSnapshot(TimePoint now, bool force) {
  if (!metrics_registry_) return;
  if (!force && now - snapshot_at_ < kSnapshotEvery) return;
  snapshot_at_ = now;
  auto snapshot = registry_.Snapshot(now);
  std::lock_guard lock(snapshot_mu_);
  snapshot_ = std::move(snapshot);
}

std::string Dispatcher::HostsJson() {
  TimePoint now = clock_.Now();
  std::vector<CompartmentSnapshot> hosts = registry_.Snapshot(now);
  if (metrics_registry_) {  // the metric callbacks' copy is refreshed by the same read
    snapshot_at_ = now;
    std::lock_guard lock(snapshot_mu_);
    snapshot_ = hosts;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : hosts) {
    nlohmann::json h = {{"host", s.host},
                        {"in_flight", s.in_flight},
                        {"cap", s.limit},
                        {"breaker", BreakerStateName(s.breaker)},
                        {"breaker_openings", s.breaker_openings},
                        {"latency_p50_ms", Millis(s.latency_p50)},
                        {"latency_p99_ms", Millis(s.latency_p99)},
                        {"successes", s.successes},
                        {"failures", s.failures},
                        {"overloaded", s.overloaded},
                        {"parked", s.parked},
                        {"unavailable", s.unavailable}};
    h["failing_since"] =
        s.failing_since ? nlohmann::json(FormatRfc3339(*s.failing_since)) : nlohmann::json(nullptr);
    h["retry_after_until"] = s.retry_after_until
                                 ? nlohmann::json(FormatRfc3339(*s.retry_after_until))
                                 : nlohmann::json(nullptr);
    out.push_back(std::move(h));
  }
  return DumpJson(out);
}

Status Dispatcher::RegisterMetrics(Registry& registry) {
  auto deliveries =
      registry.AddCounter(mn::kDeliveriesTotal, mn::kDeliveriesTotalHelp,
                          {std::string(mn::kLabelHost), std::string(mn::kLabelOutcome)});
  if (!deliveries.ok()) return deliveries.status();
  auto latency = registry.AddHistogram(mn::kDeliveryLatencySeconds, mn::kDeliveryLatencySecondsHelp,
                                       {std::string(mn::kLabelHost)}, mn::kDeliveryLatencyBuckets);
  if (!latency.ok()) return latency.status();
  using Pick = double (*)(const CompartmentSnapshot&);
  auto per_host = [this](Pick pick) {
    return [this, pick]() -> Result<std::vector<MetricSample>> {
      std::vector<std::pair<std::string, double>> values;
      {
        std::lock_guard lock(snapshot_mu_);
        for (const auto& s : snapshot_) values.emplace_back(s.host, pick(s));
      }
      return host_labels_.Fold(values);
    };
  };
  struct Gauge {
    std::string_view name, help;
    Pick pick;
  };
  const Gauge gauges[] = {
      {mn::kHostInflight, mn::kHostInflightHelp,
       [](const CompartmentSnapshot& s) { return double(s.in_flight); }},
      {mn::kHostCap, mn::kHostCapHelp,
       [](const CompartmentSnapshot& s) { return double(s.limit); }},
      {mn::kHostBreakerOpen, mn::kHostBreakerOpenHelp,
       [](const CompartmentSnapshot& s) { return s.breaker == BreakerState::kClosed ? 0.0 : 1.0; }},
  };
  for (const auto& g : gauges) {
    Status s =
        registry.AddCallbackGauge(g.name, g.help, {std::string(mn::kLabelHost)}, per_host(g.pick));
    if (!s.ok()) return s;
  }
  Status s = registry.AddCallbackGauge(mn::kParkedJobs, mn::kParkedJobsHelp, {},
                                       [this]() -> Result<std::vector<MetricSample>> {
                                         double parked = 0;
                                         std::lock_guard lock(snapshot_mu_);
                                         for (const auto& c : snapshot_)
                                           parked += static_cast<double>(c.parked);
                                         return std::vector<MetricSample>{MetricSample{{}, parked}};
                                       });
  if (!s.ok()) return s;
  deliveries_ = *deliveries;
  latency_ = *latency;
  metrics_registry_ = &registry;
  RefreshSnapshot(clock_.Now(), true);
  return Status::Ok();
}

}  // namespace bulkhead
