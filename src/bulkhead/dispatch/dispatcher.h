// Dispatcher: runs the built-in delivery jobs (webpush, activitypub, webhook) inside the server.
//
// The path of a delivery:
//   PUSH → Validate (here) → Engine stores it in kDeliveryQueue → OnJobsAvailable → Pump:
//   1. take every job from kDeliveryQueue (the store reserves it for a day) and hold it in memory;
//   2. ask the HostCompartments which hosts may start an attempt now (per-host adaptive cap,
//      breaker, Retry-After, global cap with fair share); jobs that may not start are parked in
//      their host's compartment: still reserved, no retry spent, no slot taken;
//   3. build the request (encoders/), send it through the Transport (never blocks the loop);
//   4. classify the answer (delivery/outcome.h), report it to the compartment, and finish the job:
//      ok → ACK; webpush 404/410 → discarded + `bulkhead.webpush_gone`; permanent → dead +
//      `bulkhead.delivery_dead`; retryable → FAIL through the job's retry count, not before the
//      host's Retry-After; past the job's deadline → dead "host unavailable" +
//      `bulkhead.delivery_dead`.
//   A timer set from the registry's NextWakeup, the earliest job deadline and the earliest
//   reservation renewal pumps again when time alone can change something (an open breaker's probe
//   time, a Retry-After, a deadline, a renewal).
//   Reservations: a held job that is not in flight has its reservation renewed (to now + its
//   reserve_for, a day for built-ins) once less than half of it remains, so a job parked behind an
//   open breaker for days is never failed by the engine's reservation reaper (which would spend a
//   retry); only the job's own deadline ends its wait.
//   Host state: while a host is failing, its compartment's CompartmentState (breaker open-until
//   and openings, failing-since, Retry-After) and whether it was announced unavailable are kept in
//   the store (Store::PutHostState), written after a result only when they changed and deleted
//   once the host is healthy again (or its compartment is evicted and it was not announced). Start
//   restores them into the registry before adopting reservations, so after a restart a dead host's
//   adopted jobs stay parked until its breaker's probe time, and its unavailable period still
//   counts from its first failure.
//
// Outcome jobs are ordinary Faktory jobs pushed to DispatcherConfig::outcomes_queue for the
// application's workers:
//   bulkhead.webpush_gone     args [endpoint, jid]
//   bulkhead.delivery_dead    args [jid, jobtype, reason, url]
//   bulkhead.host_unavailable args [host]   (delivery/compartment.h's rule: failing continuously
//   bulkhead.host_available   args [host]    for unavailable_after; cleared by a healthy answer)
//
// Threading: event loop thread only (the thread running the io_context given to the Engine),
// except HostsJson's cached copy read by metric callbacks, which is guarded by a mutex.
// Lifetime: the engine, transport, signer, key ring and clock must outlive the dispatcher;
// call Stop() before shutting the transport down, so that cancelled attempts leave their jobs
// reserved (adopted again at the next start) instead of failing them.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/config/config.h"
#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/dispatch/key_ring.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/transport/transport.h"

namespace bulkhead {

// Outcome job types.
inline constexpr char kWebPushGoneJobType[] = "bulkhead.webpush_gone";
inline constexpr char kDeliveryDeadJobType[] = "bulkhead.delivery_dead";
inline constexpr char kHostUnavailableJobType[] = "bulkhead.host_unavailable";
inline constexpr char kHostAvailableJobType[] = "bulkhead.host_available";

// Retries for webpush jobs that do not say (Mastodon's `retry: 5`: a push only matters in real
// time), unless the configuration sets [jobtypes.webpush] retry.
inline constexpr int kDefaultWebPushRetry = 5;
// Retries for activitypub jobs that do not say (Mastodon's ActivityPub::DeliveryWorker
// `retry: 16`, about two days of backoff), unless [jobtypes.activitypub] retry is set.
inline constexpr int kDefaultActivityPubRetry = 16;

// Applies the delivery defaults to `config` before the Engine reads it: webpush retry 5 and
// activitypub retry 16 unless configured.
void ApplyDeliveryDefaults(Config& config);

struct DispatcherConfig {
  // Where outcome jobs are pushed.
  std::string outcomes_queue = "bulkhead";
  DeliveryJobOptions jobs;
  // A Retry-After further ahead than this is cut to it.
  Duration max_retry_after = std::chrono::hours(1);
  // Per-attempt deadlines handed to the transport, by job kind (see DeadlinesFor).
  Deadlines webpush_deadlines;
  Deadlines activitypub_deadlines;
  Deadlines webhook_deadlines;
  HostCompartmentsConfig compartments;
  // Most delivery jobs held in memory (in flight + parked + waiting); beyond it they stay queued
  // in the store until some finish.
  size_t max_held = 100'000;
  // Bounded per-host metric labels.
  TopNLabelsOptions host_labels;

  // The deadlines of one attempt of a job of `kind`.
  const Deadlines& DeadlinesFor(JobKind kind) const;
};

// The dispatcher settings `config` asks for: outcome queue, private targets, job deadlines,
// per-kind attempt deadlines and the [delivery] compartment settings. `config` must have passed
// Config::Validate.
DispatcherConfig MakeDispatcherConfig(const Config& config);

// Counters since start, for tests and logs.
struct DispatcherStats {
  int64_t taken = 0;     // jobs taken from kDeliveryQueue (adopted ones included)
  int64_t adopted = 0;   // reservations adopted at Start
  int64_t attempts = 0;  // requests sent
  int64_t acked = 0;
  int64_t retried = 0;
  int64_t dead = 0;
  int64_t gone = 0;
  int64_t expired = 0;  // dead because their deadline passed
  int64_t renewed = 0;  // reservations renewed while held
  int64_t outcome_jobs = 0;
};

class Dispatcher final : public BuiltinJobs {
 public:
  // `signer` may be null: webpush jobs are then refused at PUSH.
  Dispatcher(boost::asio::io_context& io, Engine& engine, Transport& transport, VapidSigner* signer,
             const KeyRing& keys, const Clock& clock, Rng& rng, DispatcherConfig config);
  ~Dispatcher() override;
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Restores the host states kept in the store, adopts the delivery reservations left by a
  // previous run (the store's working set in kDeliveryQueue), then takes what is queued and starts
  // delivering.
  void Start();
  // Stops taking and starting deliveries; results still arriving leave their jobs untouched
  // (reserved). Idempotent.
  void Stop();

  // BuiltinJobs:
  bool Handles(std::string_view jobtype) const override;
  Status Validate(const JobRecord& job) const override;
  void OnJobsAvailable() override;

  // Takes what is available, expires jobs past their deadline and starts what may start.
  // Called by the timer and by OnJobsAvailable; public for tests driving a ManualClock.
  void Pump();

  // The JSON array for /api/hosts and INFO "hosts": per host {host, in_flight, cap, breaker,
  // latency_p50_ms, latency_p99_ms, successes, failures, overloaded, parked, unavailable,
  // failing_since, retry_after_until}.
  std::string HostsJson();

  // Registers bulkhead_host_inflight / _cap / _breaker_open, bulkhead_parked_jobs,
  // bulkhead_deliveries_total and bulkhead_delivery_latency_seconds (hosts folded by TopNLabels).
  // The scrape-time gauges read a copy refreshed on the loop at most once a second. `registry`
  // must outlive the dispatcher (its destructor removes the callbacks).
  Status RegisterMetrics(Registry& registry);

  // When the timer will pump next (nullopt: no timer set). For tests.
  std::optional<TimePoint> next_wakeup() const { return next_wakeup_; }
  const DispatcherStats& stats() const { return stats_; }
  const HostCompartments& compartments() const { return registry_; }
  size_t held() const { return jobs_.size(); }

 private:
  struct Held {
    DeliveryJob job;
    bool in_flight = false;
    std::optional<Grant> grant;  // while in flight
    TimePoint started;
    TimePoint reserved_until;  // the store's reservation expiry
    Duration reserve_for{};    // the job's reservation length
    TimePoint renew_at;        // its key in renewals_ (while not in flight)
  };

  void RestoreHosts();
  void Adopt(size_t offset);
  void TakeAvailable();
  // Adds a job taken from the store; jobs that can no longer be read are failed dead.
  void Accept(JobRecord record);
  void ExpireDue(TimePoint now);
  // Renews the reservations whose renewal time has come (held jobs not in flight).
  void RenewDue(TimePoint now);
  void ScheduleRenewal(const std::string& jid, Held& held);
  void CancelRenewal(const std::string& jid, const Held& held);
  void StartGranted(TimePoint now);
  void Launch(const std::string& jid, Grant grant, TimePoint now);
  void OnResponse(const std::string& jid, HttpResponse response);
  void Finish(Held held, const Outcome& outcome, std::optional<TimePoint> retry_after,
              TimePoint now);
  // Sends the job to dead with `reason` and pushes bulkhead.delivery_dead.
  void Dead(const DeliveryJob& job, const std::string& errtype, const std::string& reason);
  bool LastAttempt(const DeliveryJob& job) const;
  void PushOutcome(const std::string& jobtype, nlohmann::json args);
  void CheckAvailability(const std::string& host, TimePoint now);
  // Writes (or deletes) the stored state of `host` if it differs from what was written last.
  void SaveHostState(const std::string& host, TimePoint now);
  // SaveHostState for the saved hosts whose compartments were evicted.
  void SaveEvictedHosts(TimePoint now);
  // Drops a held job: its deadline entry, its pending renewal and its place in jobs_. Returns it.
  Held Forget(std::map<std::string, Held>::iterator it);
  void ArmTimer(TimePoint now);
  void RefreshSnapshot(TimePoint now, bool force);
  void CountAttempt(const std::string& host, std::string_view outcome, Duration latency);

  // Constant after construction.
  boost::asio::io_context& io_;
  Engine& engine_;
  Transport& transport_;
  VapidSigner* const signer_;
  const KeyRing& keys_;
  const Clock& clock_;
  const DispatcherConfig config_;

  HostCompartments registry_;
  boost::asio::steady_timer timer_;
  std::optional<TimePoint> next_wakeup_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool started_ = false;
  bool stopped_ = false;
  bool adopting_ = false;  // Start's listing of reservations is not finished (no Pump until then)
  bool taking_ = false;    // a store Fetch/List answer is outstanding
  bool pumping_ = false;   // Pump is on the stack (re-entry from inline callbacks is deferred)
  bool pump_again_ = false;

  std::map<std::string, Held> jobs_;                       // by jid
  std::map<std::string, std::deque<std::string>> fresh_;   // host → jids not yet parked/started
  std::set<std::pair<TimePoint, std::string>> deadlines_;  // of held jobs not in flight
  std::set<std::pair<TimePoint, std::string>> renewals_;   // renew-at of held jobs not in flight
  std::set<std::string> unavailable_hosts_;             // announced with bulkhead.host_unavailable
  std::map<std::string, HostStateRecord> saved_hosts_;  // what the store holds, by host
  DispatcherStats stats_;

  // Metrics (null until RegisterMetrics).
  TopNLabels host_labels_;
  CounterFamily* deliveries_ = nullptr;
  HistogramFamily* latency_ = nullptr;
  Registry* metrics_registry_ = nullptr;
  TimePoint snapshot_at_{};
  TimePoint evicted_at_{};
  mutable std::mutex snapshot_mu_;
  std::vector<CompartmentSnapshot> snapshot_;  // guarded by snapshot_mu_
};

}  // namespace bulkhead
