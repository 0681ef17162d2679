// Outcome: what one delivery attempt means, for the job (done, retry, dead, subscription gone) and
// for the destination host (healthy, failing, overloaded). Pure classification: no I/O, no state.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/engine/job_kind.h"
#include "bulkhead/transport/transport.h"

namespace bulkhead {

// The raw result of one attempt, as the transport reports it.
struct AttemptResult {
  TransportError error = TransportError::kNone;
  int http_status = 0;  // meaningful only when error == kNone
};

// What should happen to the job.
enum class OutcomeClass {
  kOk,         // delivered; the job is done
  kGone,       // the webpush subscription no longer exists: delete it, do not retry
  kPermanent,  // will never succeed as sent: dead with `reason`, do not retry
  kRetryable,  // may succeed later: retry per the job type's retry policy
};

const char* OutcomeClassName(OutcomeClass c);

// What the attempt says about the destination host; feeds the circuit breaker, the adaptive limit
// and the host-unavailable rule (see Compartment).
enum class HostSignal {
  kHealthy,     // the host answered sensibly (2xx, and 4xx other than 408/429)
  kFailure,     // the host failed: timeout, connect/DNS/reset/TLS error, 5xx other than 503, 408
  kOverloaded,  // the host is alive but asks for less traffic: 429, 503
  kNone,        // the host was not contacted or the failure is local (SSRF block, redirects, other)
};

const char* HostSignalName(HostSignal s);

struct Outcome {
  OutcomeClass cls = OutcomeClass::kRetryable;
  HostSignal host = HostSignal::kNone;
  // Short machine-friendly explanation, e.g. "http 404", "timeout"; stored as the dead reason.
  std::string reason;
  // The HTTP status of the answer; 0 when there was none (a transport failure).
  int http_status = 0;
};

// Classifies `r` for a job of type `kind`. Total: every input maps to exactly one outcome.
//
// Rules (Mastodon's app/workers/web/push_notification_worker.rb and
// app/workers/activitypub/delivery_worker.rb, plus the exceptions of GoToSocial's
// internal/transport/delivery and Misskey's DeliverProcessorService):
//  * 2xx: kOk.
//  * webpush 404/410: kGone (delete the subscription; no retry).
//  * 408, 429, 5xx: kRetryable.
//  * any other 4xx: kPermanent with reason "http <code>".
//  * 1xx/3xx reaching us (redirects are followed by the transport): kPermanent, host healthy;
//    retrying the identical request cannot change the answer. Codes outside 100..599: kPermanent,
//    no host signal.
//  * timeout (connect, first byte, total, low speed), connect, DNS, reset, TLS errors: kRetryable,
//    host failure.
//  * kSsrfRefused, kTooManyRedirects: kPermanent, no host signal (policy, not host health).
//  * kCancelled, kOther: kRetryable, no host signal.
// Transport failures' reasons are the coarse words "timeout", "connect_error", "dns_error",
// "connection_reset", "tls_error", "blocked_address", "too_many_redirects", "other" (kept stable:
// they are stored as dead reasons; TransportErrorName gives the fine kind).
Outcome Classify(JobKind kind, const AttemptResult& r);

// The HTTP status a reason Classify wrote stands for: "http 503" → 503; 0 for any other text
// (transport failures, reasons of other origins). For reasons read back from a stored failure.
int HttpStatusOfReason(std::string_view reason);

}  // namespace bulkhead
