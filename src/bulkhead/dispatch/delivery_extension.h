// DeliveryExtension: a delivery job type that a module after dispatch/ defines and the Dispatcher
// runs like its own kinds (the push relay's `relay.apns` and `relay.fcm`, relay/relay_delivery.h).
// The dispatcher keeps everything that makes a delivery safe — the store, the reservation and its
// renewal, the compartment's adaptive cap, breaker and Retry-After, the retries, the deadline —
// and asks the extension only what is particular to the job type:
//   Read:   the job's target, its compartment key and its deadline, from args[0] (at PUSH, and
//           whenever the job is taken);
//   Build:  the request (possibly later: an access token may have to be fetched first);
//   Judge:  what an answer means (Outcome), and how long the compartment should hold off;
//   OnGone: what to do besides discarding the job when the answer says its target is gone.
// Every method runs on the event loop thread.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "bulkhead/compartment/outcome.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct DeliveryJob;

// What an answer to an extension job means.
struct ExtensionVerdict {
  Outcome outcome;
  // The compartment waits until then before its next attempt (as after a Retry-After), and a
  // retried job is not retried before it. nullopt: as the answer's own Retry-After says.
  std::optional<TimePoint> hold_until;
};

class DeliveryExtension {
 public:
  using BuildDone = std::function<void(Result<HttpRequest>)>;

  virtual ~DeliveryExtension() = default;

  // True for the jobtypes it defines.
  virtual bool Handles(std::string_view jobtype) const = 0;

  // Reads args[0] of one of its jobs: sets job.url (shown in outcomes), job.host (the compartment
  // key: any text, e.g. "apns:app") and job.deadline (from `born`, the job's creation).
  // InvalidArgument is the PUSH error ("relay.apns: args[0].token: ...").
  virtual Status Read(const nlohmann::json& arg, TimePoint born, DeliveryJob& job) const = 0;

  // Builds the request of `job` (deadlines included) and calls `done` with it, now or later on the
  // loop. An error is reported as a local failure of the attempt (Judge sees it as
  // TransportError::kOther with the message).
  virtual void Build(const DeliveryJob& job, BuildDone done) = 0;

  // The meaning of `response` to an attempt of `job` that took `latency`.
  virtual ExtensionVerdict Judge(const DeliveryJob& job, const HttpResponse& response,
                                 Duration latency, TimePoint now) = 0;

  // The answer said the job's target is gone (OutcomeClass::kGone); the job is discarded. Returns
  // false when the dispatcher should push the generic outcome job (OutcomeJobs::TokenGone).
  virtual bool OnGone(const DeliveryJob& job, const Outcome& outcome) = 0;
};

}  // namespace bulkhead
