// OutcomeJobs: the ordinary Faktory jobs the delivery engine pushes for the application's workers
// to tell them what became of a delivery or a host:
//   bulkhead.webpush_gone     args [endpoint, jid]
//   bulkhead.delivery_dead    args [jid, jobtype, reason, url]
//   bulkhead.host_unavailable args [host]   (compartment/compartment.h's rule: failing
//   bulkhead.host_available   args [host]    continuously for unavailable_after; cleared by a
//                                            healthy answer)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
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
  void HostUnavailable(const std::string& host);
  void HostAvailable(const std::string& host);

  // Outcome jobs handed to the engine (a failed push is logged, not retried).
  int64_t pushed() const { return stats_.outcome_jobs; }

 private:
  void Push(const std::string& jobtype, nlohmann::json args);

  Engine& engine_;
  const Clock& clock_;
  const std::string queue_;
  DispatcherStats& stats_;
};

}  // namespace bulkhead
