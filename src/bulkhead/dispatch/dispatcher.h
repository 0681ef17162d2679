// Dispatcher: runs the built-in delivery jobs (webpush, activitypub, webhook) inside the server.
// It is the coordinator of the delivery engine: it owns the parts below, wires them together and
// decides when to look again (Pump, its timer, Start/Stop).
//
// The path of a delivery:
//   PUSH → Validate (here) → Engine stores it in kDeliveryQueue → OnJobsAvailable → Pump:
//   1. take every job from kDeliveryQueue (the store reserves it for a day) and hold it in the
//      HeldJobs ledger (held_jobs.h) as fresh for its host;
//   2. ask the HostCompartments (compartment/) which hosts may start an attempt now (per-host
//      adaptive cap, breaker, Retry-After, global cap with fair share); jobs that may not start
//      are parked in their host's compartment: still reserved, no retry spent, no slot taken;
//   3. the AttemptRunner (attempt_runner.h) builds the request (encoders/) and sends it through
//      the Transport (never blocks the loop); with BuildOnWorkers, the built-in jobs' requests
//      (their signatures and encryption) are built on worker threads (request_builder.h) and
//      sent when the result is back on the loop;
//   4. the AttemptRunner classifies the answer (compartment/outcome.h), reports it to the
//      compartment, lets the HostStateKeeper announce and save the host, and finishes the job:
//      ACK, discarded (webpush gone), dead, or FAIL through its retry count, not before the
//      host's Retry-After; past the job's deadline → dead "host unavailable". OutcomeJobs
//      (outcome_jobs.h) pushes what the application's workers are told.
//   A timer set from the compartments' NextWakeup and the ledger's earliest deadline and
//   reservation renewal pumps again when time alone can change something (an open breaker's
//   probe time, a Retry-After, a deadline, a renewal).
//   Reservations: a held job that is not in flight has its reservation renewed (to now + its
//   reserve_for, a day for built-ins) once less than half of it remains, so a job parked behind an
//   open breaker for days is never failed by the engine's reservation reaper (which would spend a
//   retry); only the job's own deadline ends its wait.
//   Host state: the HostStateKeeper (host_state_keeper.h) keeps failing hosts' compartment state
//   in the store and restores it at Start, before reservations are adopted. On a shared store,
//   SharedHostStates (shared_host_states.h) adopts the other nodes' changes and lets one node
//   at a time probe a half-open host.
//   Cluster-wide caps: on a store shared by N live nodes (ClusterLink::live_nodes(), learned by
//   the store at each heartbeat), this node's global cap is global_max_in_flight / N and each
//   host's adaptive cap bounds divide the same way (floor, never below 1;
//   HostCompartments::SetNodes), so the cluster stays within the configured caps without a
//   round trip per attempt. When N changes (the store's node count handler) the shares follow at
//   once and the dispatcher pumps: survivors of a dead node grow, nodes shrink when one joins
//   (attempts in flight are not cancelled; new ones wait until under the new caps).
//   Views: Snapshot() copies the state into a DeliverySnapshot (delivery_snapshot.h), plain data
//   the dispatcher never renders: view/ does (view/host_view.h, view/api_json.h for /api/hosts
//   and INFO "hosts", view/delivery_gauges.h for the bulkhead_host_* gauges, which the server
//   registers over published_snapshot() and keeps fresh with PublishSnapshot()).
//
// Threading: event loop thread only (the thread running the io_context given to the Engine),
// except published_snapshot(), read by metric callbacks on any thread (util/published.h).
// Lifetime: the engine, transport, signer, key ring and clock must outlive the dispatcher;
// call Stop() before shutting the transport down, so that cancelled attempts leave their jobs
// reserved (adopted again at the next start; on a shared store, given back to the delivery queue
// when the store closes: StoreOptions::redis_give_back_at_stop) instead of failing them.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/dispatch/attempt_runner.h"
#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/dispatch/dispatcher_config.h"
#include "bulkhead/dispatch/held_jobs.h"
#include "bulkhead/dispatch/host_state_keeper.h"
#include "bulkhead/dispatch/key_ring.h"
#include "bulkhead/dispatch/outcome_jobs.h"
#include "bulkhead/dispatch/request_builder.h"
#include "bulkhead/dispatch/shared_host_states.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/published.h"

namespace bulkhead {

class Dispatcher final : public BuiltinJobs {
 public:
  // `signer` may be null: webpush jobs are then refused at PUSH.
  Dispatcher(boost::asio::io_context& io, Engine& engine, Transport& transport, VapidSigner* signer,
             const KeyRing& keys, const Clock& clock, Rng& rng, DispatcherConfig config);
  ~Dispatcher() override;
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Restores the host states kept in the store, adopts the delivery reservations left by a
  // previous run (the store's working set in kDeliveryQueue; not on a shared store, where those
  // are other nodes' or given back by the store's liveness reaper: ClusterLink::shared()), then
  // takes what is queued and starts delivering.
  void Start();
  // Stops taking and starting deliveries; results still arriving leave their jobs untouched
  // (reserved). Idempotent.
  void Stop();

  // Runs the jobs of `extension`'s types too (delivery_extension.h); it must outlive the
  // dispatcher. Call before Start().
  void AddExtension(DeliveryExtension* extension) { extensions_.push_back(extension); }

  // Builds the built-in jobs' requests on `threads` worker threads (request_builder.h) instead of
  // on the loop, with `build` (null: AttemptRunner::Build, i.e. BuildDeliveryRequest). Call before
  // Start(). A result that comes back after Stop() sends nothing: its job stays reserved.
  void BuildOnWorkers(size_t threads, RequestBuilder::BuildFn build = nullptr);

  // BuiltinJobs:
  bool Handles(std::string_view jobtype) const override;
  Status Validate(const JobRecord& job) const override;
  void OnJobsAvailable() override;

  // Takes what is available, expires jobs past their deadline and starts what may start.
  // Called by the timer and by OnJobsAvailable; public for tests driving a ManualClock.
  void Pump();

  // The state of every host compartment and the totals, now (views render it: view/host_view.h).
  DeliverySnapshot Snapshot() const;
  // Publishes Snapshot() to published_snapshot(). Whoever reads that off the loop publishes as
  // often as it needs fresh figures (server/server_metrics.h: every second while the StatsD
  // emitter reads, and right before a /metrics scrape).
  void PublishSnapshot();

  // Registers bulkhead_deliveries_total and bulkhead_delivery_latency_seconds (counted per
  // attempt, hosts folded by host_labels()) in `registry`, which must outlive the dispatcher.
  Status RegisterMetrics(Registry& registry);

  // Operator actions on one host (the dashboard's host page; dispatch/host_actions.cc). NotFound
  // when no compartment holds `host`. Each saves the host's new state and pumps.
  // ProbeHostNow: an open breaker's wait (and any Retry-After) ends now, so the next attempt — a
  // parked job first — is its half-open probe. FailedPrecondition when the breaker is closed.
  Status ProbeHostNow(const std::string& host);
  // ForgetHostFailures: drops the host's failure history (breaker closed, failing-since,
  // Retry-After and last error cleared; its openings count stays), so its parked jobs start at once
  // under its in-flight cap: the dashboard's "release parked jobs".
  Status ForgetHostFailures(const std::string& host);

  // The snapshot last published (null before the first PublishSnapshot()), for readers on any
  // thread: view/delivery_gauges.h reads the per-host gauges from it. Lives as long as the
  // dispatcher.
  const Published<DeliverySnapshot>& published_snapshot() const { return published_; }
  // The host labels of the per-attempt metrics (the hosts seen most, the rest folded into one),
  // for the per-host gauges to share. Lives as long as the dispatcher.
  TopNLabels& host_labels() { return host_labels_; }

  // When the timer will pump next (nullopt: no timer set). For tests.
  std::optional<TimePoint> next_wakeup() const { return next_wakeup_; }
  const DispatcherStats& stats() const { return stats_; }
  const HostCompartments& compartments() const { return compartments_; }
  const SharedHostStates* shared_hosts() const { return shared_hosts_.get(); }
  size_t held() const { return held_.size(); }

 private:
  void Adopt(size_t offset);
  // The extension that runs `jobtype`, or null (a built-in kind, or none).
  DeliveryExtension* ExtensionFor(std::string_view jobtype) const;
  // Takes the next job of kDeliveryQueue unless a take is outstanding or no more may be held.
  // Jobs are taken one Fetch at a time, each answer continuing (TookOne) on a later turn of the
  // loop, until none comes; then one Pump starts what the run took.
  void TakeAvailable();
  // After a take's answer (`got`: it brought a job): takes the next job, or ends the run.
  void TookOne(bool got);
  // Adds a job taken from the store; jobs that can no longer be read are failed dead.
  void Accept(JobRecord record);
  void ExpireDue(TimePoint now);
  // Renews the reservations whose renewal time has come (held jobs not in flight).
  void RenewDue(TimePoint now);
  void StartGranted(TimePoint now);
  void ParkFresh(TimePoint now);
  // Starts the attempt of `held` (a job of held_, not in flight) under `grant`.
  void Launch(HeldJob& held, Grant grant, TimePoint now);
  void OnResponse(const std::string& jid, HttpResponse response);
  // The request of the in-flight job `jid`, built by the RequestBuilder: send it, or refuse the
  // job when it could not be built.
  void OnBuilt(const std::string& jid, Result<HttpRequest> request);
  // Pumps on a later turn of the loop, once for every call made before it runs.
  void PumpSoon();
  void ArmTimer(TimePoint now);
  // Applies the share of `nodes` live nodes to the caps (logged when it changes).
  void ApplyNodeCount(size_t nodes);
  // The snapshot at `now`, built for Snapshot() and PublishSnapshot().
  DeliverySnapshot Collect(TimePoint now) const;

  // Constant after construction.
  boost::asio::io_context& io_;
  Engine& engine_;
  VapidSigner* const signer_;
  const KeyRing& keys_;
  const Clock& clock_;
  const DispatcherConfig config_;
  std::vector<DeliveryExtension*> extensions_;

  // The parts (declared in dependency order: each may use those above it).
  HostCompartments compartments_;
  HeldJobs held_;
  DispatcherStats stats_;
  OutcomeJobs outcomes_;
  HostStateKeeper host_states_;
  AttemptRunner runner_;
  // On a shared store only: the hosts' breakers shared with the other nodes.
  std::unique_ptr<SharedHostStates> shared_hosts_;
  // Builds requests on worker threads; declared last of the parts, so its threads stop first.
  std::unique_ptr<RequestBuilder> builder_;

  boost::asio::steady_timer timer_;
  std::optional<TimePoint> next_wakeup_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool started_ = false;
  bool stopped_ = false;
  bool adopting_ = false;  // Start's listing of reservations is not finished (no Pump until then)
  bool taking_ = false;    // a store Fetch/List answer is outstanding
  bool took_ = false;      // the current run of takes took a job (its end pumps)
  // The error of the last failed take, logged once until a take succeeds or the error changes (a
  // store unreachable for minutes would otherwise log it at every wake-up).
  std::string take_failing_;
  bool pumping_ = false;  // Pump is on the stack (a Pump from below it runs after it instead)
  bool pump_again_ = false;
  bool pump_posted_ = false;  // PumpSoon's Pump is waiting on the loop
  TimePoint evicted_at_{};

  // Metrics.
  TopNLabels host_labels_;
  Published<DeliverySnapshot> published_;  // written by PublishSnapshot() only
};

}  // namespace bulkhead
