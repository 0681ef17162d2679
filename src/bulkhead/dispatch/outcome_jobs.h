// OutcomeJobs: the ordinary Faktory jobs the delivery engine pushes for the application's workers
// to tell them what became of a delivery or a host, each with one argument, the event's
// OutcomeRecord object (outcome_record.h; docs/deliveries.md):
//   bulkhead.webpush_gone     a webpush subscription answered 404/410: the job is discarded
//   bulkhead.delivery_dead    a delivery will not be retried (refused, retries spent, deadline)
//   bulkhead.host_unavailable (compartment/compartment.h's rule: failing continuously for
//   bulkhead.host_available    unavailable_after; cleared by a healthy answer)
// With OutcomeArgs::kPositional (delivery_outcome_args = "positional", deprecated) the arguments
// are the positional ones of earlier versions instead (PositionalOutcomeArgs).
//
// Once per event across nodes: an outcome job's jid is derived from its event, and a PUSH
// of a jid the store holds changes nothing (Engine::Push), so the same event pushed again — by
// another node sharing the store, or by a node that re-ran a delivery given back after its first
// node died between the outcome and the delivery's end — is a duplicate the store drops while the
// first outcome job is still there (queued, scheduled, retrying or being worked on). Once the
// application's worker has ACKed it, the jid is free again and a later repeat would run twice: the
// guarantee is at-least-once with repeats absorbed while the first is pending. The events:
//   webpush_gone, delivery_dead: the delivery's jid ("bh-gone-JID", "bh-dead-JID");
//   host_unavailable: the host and the start of its failing period, which the nodes share
//                     (host state records) ("bh-unavailable-HASH-SINCE_US");
//   host_available: the host and the start of the failing period that ended
//                   ("bh-available-HASH-SINCE_US"), so two nodes that both saw its end push one
//                   job (the others adopt the verdict from the shared host state instead of
//                   pushing it, see host_state_keeper.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/dispatch/outcome_record.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

inline constexpr char kWebPushGoneJobType[] = "bulkhead.webpush_gone";
inline constexpr char kDeliveryDeadJobType[] = "bulkhead.delivery_dead";
inline constexpr char kHostUnavailableJobType[] = "bulkhead.host_unavailable";
inline constexpr char kHostAvailableJobType[] = "bulkhead.host_available";
inline constexpr char kRelayTokenGoneJobType[] = "bulkhead.relay_token_gone";

// Event loop thread only. The engine, clock and stats must outlive it.
class OutcomeJobs {
 public:
  // `queue` may be an internal one ("~NAME", which no client can name: the Sidekiq bridge's,
  // bridge/sidekiq_outcome_writer.h): its jobs are reserved for this long when taken.
  static constexpr int kInternalReserveSeconds = 60;
  // Counts each job handed to the engine in `stats.outcome_jobs`.
  OutcomeJobs(Engine& engine, const Clock& clock, std::string queue, DispatcherStats& stats,
              OutcomeArgs form = OutcomeArgs::kObject)
      : engine_(engine), clock_(clock), queue_(std::move(queue)), stats_(stats), form_(form) {}
  OutcomeJobs(const OutcomeJobs&) = delete;
  OutcomeJobs& operator=(const OutcomeJobs&) = delete;

  // `status`: the HTTP status of the answer (404 or 410).
  void WebPushGone(const DeliveryJob& job, int status, const std::string& reason);
  // A relay job's device token is gone (APNs 410, FCM UNREGISTERED) and it had no Unsubscribe-URL:
  // pushes bulkhead.relay_token_gone.
  void TokenGone(const DeliveryJob& job, int status, const std::string& reason);
  // `status`: the HTTP status of the answer that decided it (0: none, JSON null).
  void DeliveryDead(const DeliveryJob& job, const std::string& reason, int status);
  // `failing_since`: the start of the failing period that made the host unavailable (nullopt:
  // unknown, the job gets a fresh jid); `last_error`: the host's last failure as Classify
  // worded it (empty: unknown).
  void HostUnavailable(const std::string& host, std::optional<TimePoint> failing_since,
                       const std::string& last_error);
  // `failing_since`: the start of the failing period that ended (nullopt: unknown, a fresh jid).
  void HostAvailable(const std::string& host, std::optional<TimePoint> failing_since);

  // Outcome jobs handed to the engine (a failed push is logged, not retried).
  int64_t pushed() const { return stats_.outcome_jobs; }

 private:
  // The record of a delivery event of `job`.
  OutcomeRecord AboutDelivery(const char* event, const DeliveryJob& job, const std::string& reason,
                              int status) const;
  // Pushes the outcome job of `record` with `jid` (empty: a fresh one).
  void Push(const OutcomeRecord& record, std::string jid);

  Engine& engine_;
  const Clock& clock_;
  const std::string queue_;
  DispatcherStats& stats_;
  const OutcomeArgs form_;
};

}  // namespace bulkhead
