// AttemptRunner: one delivery attempt from request to verdict, and every way a delivery job ends.
//
//   Send:     build the job's request (encoders/), set the kind's deadlines, hand it to the
//             Transport (never blocks the loop);
//   Conclude: classify the answer (compartment/outcome.h), report it to the host's compartment,
//             count it in the metrics, let the HostStateKeeper announce/save the host, and finish
//             the job: ok → ACK; webpush 404/410 → discarded + bulkhead.webpush_gone; permanent →
//             dead + bulkhead.delivery_dead; retryable → FAIL through the job's retry count, not
//             before the host's Retry-After (the last one also pushes bulkhead.delivery_dead);
//             past the job's deadline → dead "host unavailable (last: <the failure>)".
//   Every outcome job carries the HTTP status of the answer that decided it (none for network
//   failures; for a deadline passed while waiting, that of the failure the job's payload records).
//
// The runner holds no job: the dispatcher's HeldJobs ledger does, and hands the job in.
// Not thread-safe: event loop thread only. Everything passed to the constructor must outlive it.
#pragma once

#include <optional>
#include <string>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/dispatch/dispatcher_config.h"
#include "bulkhead/dispatch/host_state_keeper.h"
#include "bulkhead/dispatch/key_ring.h"
#include "bulkhead/dispatch/outcome_jobs.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/transport/transport.h"

namespace bulkhead {

// The reason (and dead-set message) of a job whose deadline passed; " (last: …)" follows when an
// attempt failed before.
inline constexpr char kHostUnavailableReason[] = "host unavailable";

class AttemptRunner {
 public:
  // Collaborators of the runner; `signer` may be null (webpush requests then fail to build).
  struct Parts {
    Engine& engine;
    Transport& transport;
    VapidSigner* signer;
    const KeyRing& keys;
    const Clock& clock;
    HostCompartments& compartments;
    HostStateKeeper& host_states;
    OutcomeJobs& outcomes;
    const DispatcherConfig& config;
    DispatcherStats& stats;  // counted here: attempts, acked, retried, dead, gone, expired
  };
  explicit AttemptRunner(Parts parts) : p_(parts) {}
  AttemptRunner(const AttemptRunner&) = delete;
  AttemptRunner& operator=(const AttemptRunner&) = delete;

  // Sends `job`'s request; `done` runs with the answer on the loop, never inside Send. When the
  // request cannot be built nothing is sent and the error is returned (see Refused).
  Status Send(const DeliveryJob& job, Transport::DoneCallback done);
  // Sends `request`, built for the built-in `job` elsewhere (RequestBuilder): sets the kind's
  // deadlines and HTTP version and hands it to the Transport.
  void SendBuilt(const DeliveryJob& job, HttpRequest request, Transport::DoneCallback done);
  // What the built-in `job`'s request is built with (BuildDeliveryRequest and the runner's
  // signer, keys and clock, all thread-safe): the RequestBuilder's default work. Any thread.
  Result<HttpRequest> Build(const DeliveryJob& job) const;

  // The request of `job`, granted `grant`, could not be built (Send's error): gives the slot back
  // as a permanent outcome and sends the job dead.
  void Refused(const DeliveryJob& job, const Grant& grant, const Status& error, TimePoint now);

  // The answer to an attempt of `job` started at `started` under `grant`. See the file comment.
  void Conclude(const DeliveryJob& job, const Grant& grant, TimePoint started,
                const HttpResponse& response, TimePoint now);

  // The attempt was cancelled by a shutdown: gives the slot back; the job stays reserved.
  void Release(const Grant& grant, TimePoint started, TimePoint now);

  // Sends the job dead with `reason` and pushes bulkhead.delivery_dead with `status` (0: none).
  void Dead(const DeliveryJob& job, const std::string& errtype, const std::string& reason,
            int status);
  // The job's deadline passed while it waited: dead "host unavailable (last: <its last failure>)".
  void Expire(const DeliveryJob& job);
  // Hands a job that could not be parked (its host's backlog is full) back to the retry schedule
  // (dead, with bulkhead.delivery_dead, when it was its last retry).
  void ReturnForRetry(const DeliveryJob& job, const std::string& errtype,
                      const std::string& reason);

  // Counts each attempt in bulkhead_deliveries_total and bulkhead_delivery_latency_seconds with
  // hosts folded by `labels`. All must outlive the runner. Off until called.
  void CountAttemptsIn(CounterFamily* deliveries, HistogramFamily* latency, TopNLabels* labels);

 private:
  void Finish(const DeliveryJob& job, const Outcome& outcome, std::optional<TimePoint> retry_after,
              TimePoint now);
  // FAIL through the retry count, not before `not_before`; the last also pushes delivery_dead.
  void Retry(const DeliveryJob& job, const std::string& errtype, const std::string& reason,
             int status, std::optional<TimePoint> not_before);
  // Dead past the deadline, `last_failure` (and its `status`) being what failed last.
  void ExpireAfter(const DeliveryJob& job, const std::string& last_failure, int status);
  bool LastAttempt(const DeliveryJob& job) const;
  void CountAttempt(const std::string& host, std::string_view outcome, Duration latency);

  Parts p_;
  CounterFamily* deliveries_ = nullptr;
  HistogramFamily* latency_ = nullptr;
  TopNLabels* host_labels_ = nullptr;
};

}  // namespace bulkhead
