// DeliveryJob: one built-in delivery job (webpush, activitypub, webhook) read from its Faktory
// payload, and the HTTP request that delivers it. Pure functions: no I/O, no state, so PUSH-time
// validation and the dispatcher share exactly one reading of a job. docs/deliveries.md documents
// the arguments for the application's authors.
//
// Job arguments (`args[0]`, one JSON object):
//   webpush:     see encoders/webpush_request.h ({"subscription": {...}, "payload": ..., "ttl":
//                ..., "unsubscribe_url": ...})
//   activitypub: {"inbox": URL, "activity": OBJECT or STRING, "key_id": KEY URI,
//                 "headers": {"Collection-Synchronization": VALUE} (optional)}
//                POST, Content-Type application/activity+json, HTTP-signed with the key the
//                KeyRing holds for key_id (draft-cavage, rsa-sha256); a string activity is the
//                body byte for byte; Collection-Synchronization is sent and signed.
//   webhook:     {"url": URL, "method": "POST" (default; GET, PUT, PATCH, DELETE),
//                 "headers": {NAME: VALUE, ...} (optional), "body": STRING or JSON (optional;
//                 JSON is sent serialised, with Content-Type application/json unless given)}
//   every kind:  "context": OBJECT (optional, at most kMaxDeliveryContextBytes serialised),
//                echoed unchanged in every outcome job of the delivery (outcome_record.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bulkhead/compartment/outcome.h"
#include "bulkhead/dispatch/delivery_extension.h"
#include "bulkhead/dispatch/key_ring.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The largest `context` a job may carry, serialised as JSON.
inline constexpr size_t kMaxDeliveryContextBytes = 4096;
// The largest value of an activitypub job's Collection-Synchronization header.
inline constexpr size_t kMaxActivityPubHeaderBytes = 4096;

struct DeliveryJobOptions {
  // Accept http:// targets (local test services); https only otherwise.
  bool allow_private_targets = false;
  // How long after its creation a job may still be delivered; past it the job is dead ("host
  // unavailable"). Web Push uses the job's own ttl instead.
  Duration activitypub_deadline = std::chrono::hours(48);
  Duration webhook_deadline = std::chrono::hours(24);
  // Shortest deadline a webpush job gets, so that ttl 0 ("deliver now or never") still gets its
  // first attempt.
  Duration min_webpush_deadline = std::chrono::minutes(1);
};

struct DeliveryJob {
  std::string jid;
  std::string jobtype;
  JobKind kind = JobKind::kWebhook;
  nlohmann::json args;  // the job's `args` array, unchanged
  std::string url;      // push endpoint, inbox or webhook URL
  std::string host;     // compartment key: "host" or "host:port" (TargetUrl::Authority)
  TimePoint deadline;   // created_at (else enqueued time) + the kind's allowance
  // From the payload: `retry` (nullopt = the configured default) and the retry_count of the
  // previous failure (nullopt = no failure yet). Used to tell whether a failure is the last.
  std::optional<int> retry;
  std::optional<int> last_retry_count;
  // The message of the previous failure (`failure.message`, e.g. "http 503"; empty: none yet).
  std::string last_failure;
  // args[0].context (null when absent): echoed in the delivery's outcome jobs.
  nlohmann::json context;
  // The extension that runs the job (delivery_extension.h); null for the built-in kinds, whose
  // `kind` then says which.
  DeliveryExtension* extension = nullptr;
};

// Reads and validates a stored delivery job. InvalidArgument names the field and the problem
// (the PUSH error text), e.g. "activitypub: args[0].inbox: URL scheme must be https".
// `keys` may be null (key_id then only has to be a non-empty string). A job of `extension`'s type
// is read by it (job.extension is set); `extension` null: the built-in kinds only.
Result<DeliveryJob> ParseDeliveryJob(const JobRecord& record, const DeliveryJobOptions& options,
                                     const KeyRing* keys, DeliveryExtension* extension = nullptr);

// What can still be read of a job ParseDeliveryJob refuses (it was accepted at PUSH, but e.g. its
// key was removed since), for the outcome of its end: jid and jobtype always; the target URL and
// host, and the context, when they read as valid.
DeliveryJob ReadRefusedDeliveryJob(const JobRecord& record);

// Builds the HTTP request for `job`. `signer` is needed for webpush jobs, `keys` for activitypub.
// InvalidArgument when the job cannot be sent as it is (e.g. its key_id was removed), Internal
// for crypto failures.
Result<HttpRequest> BuildDeliveryRequest(const DeliveryJob& job, VapidSigner* signer,
                                         const KeyRing& keys, const Clock& clock);

}  // namespace bulkhead
