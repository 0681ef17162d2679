// OutcomeJobs: the ordinary Faktory jobs the delivery engine pushes for the application's workers
// to tell them what became of a delivery or a host:
//   bulkhead.webpush_gone     args [endpoint, jid]
//   bulkhead.delivery_dead    args [jid, jobtype, reason, url]
//   bulkhead.host_unavailable args [host]   (compartment/compartment.h's rule: failing
//   bulkhead.host_available   args [host]    continuously for unavailable_after; cleared by a
//                                            healthy answer)
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
#include "bulkhead/engine/engine.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

inline constexpr char kWebPushGoneJobType[] = "bulkhead.webpush_gone";
inline constexpr char kDeliveryDeadJobType[] = "bulkhead.delivery_dead";
inline constexpr char kHostUnavailableJobType[] = "bulkhead.host_unavailable";
inline constexpr char kHostAvailableJobType[] = "bulkhead.host_available";

// Event loop thread only. The engine, clock and stats must outlive it.
class OutcomeJobs {
 public:
  // Counts each job handed to the engine in `stats.outcome_jobs`.
  OutcomeJobs(Engine& engine, const Clock& clock, std::string queue, DispatcherStats& stats)
      : engine_(engine), clock_(clock), queue_(std::move(queue)), stats_(stats) {}
  OutcomeJobs(const OutcomeJobs&) = delete;
  OutcomeJobs& operator=(const OutcomeJobs&) = delete;

  void WebPushGone(const DeliveryJob& job);
  void DeliveryDead(const DeliveryJob& job, const std::string& reason);
  // `failing_since`: the start of the failing period that made the host unavailable (nullopt:
  // unknown, the job gets a fresh jid).
  void HostUnavailable(const std::string& host, std::optional<TimePoint> failing_since);
  // `failing_since`: the start of the failing period that ended (nullopt: unknown, a fresh jid).
  void HostAvailable(const std::string& host, std::optional<TimePoint> failing_since);

  // Outcome jobs handed to the engine (a failed push is logged, not retried).
  int64_t pushed() const { return stats_.outcome_jobs; }

 private:
  // Pushes an outcome job with `jid` (empty: a fresh one).
  void Push(const std::string& jobtype, nlohmann::json args, std::string jid);

  Engine& engine_;
  const Clock& clock_;
  const std::string queue_;
  DispatcherStats& stats_;
};

}  // namespace bulkhead
