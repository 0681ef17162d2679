// Outcome: what one delivery attempt means, for the job (done, retry, dead, subscription gone) and
// for the destination host (healthy, failing, overloaded). Pure classification: no I/O, no state.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bulkhead {

// The built-in job types bulkhead delivers itself.
enum class JobKind { kWebPush, kActivityPub, kWebhook };

// "webpush", "activitypub", "webhook": the Faktory jobtype names of the built-in kinds.
const char* JobKindName(JobKind kind);
// The kind named `name` (exact, lowercase), or nullopt for any other jobtype.
std::optional<JobKind> JobKindFromName(std::string_view name);

// How an attempt ended below HTTP. kNone means an HTTP status line was received.
enum class TransportError {
  kNone = 0,
  kTimeout,           // a connect, first-byte or total deadline expired
  kConnectError,      // TCP connect refused/unreachable, or every candidate address failed
  kDnsError,          // name resolution failed or timed out
  kConnectionReset,   // the peer reset or closed the connection mid-exchange
  kTlsError,          // handshake or certificate failure
  kBlockedAddress,    // the SSRF guard refused every resolved address; the host was never contacted
  kTooManyRedirects,  // the redirect limit was exceeded
  kOther,             // any other local failure (e.g. response body over the size limit)
};

const char* TransportErrorName(TransportError e);

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
};

// Classifies `r` for a job of type `kind`. Total: every input maps to exactly one outcome.
//
// Rules (Mastodon's workers plus the GoToSocial/Misskey exceptions, see
// shared/reference/delivery.md):
//  * 2xx: kOk.
//  * webpush 404/410: kGone (delete the subscription; no retry).
//  * 408, 429, 5xx: kRetryable.
//  * any other 4xx: kPermanent with reason "http <code>".
//  * 1xx/3xx reaching us (redirects are followed by the transport): kPermanent, host healthy;
//    retrying the identical request cannot change the answer. Codes outside 100..599: kPermanent,
//    no host signal.
//  * timeout, connect, DNS, reset, TLS errors: kRetryable, host failure.
//  * kBlockedAddress, kTooManyRedirects: kPermanent, no host signal (policy, not host health).
//  * kOther: kRetryable, no host signal.
Outcome Classify(JobKind kind, const AttemptResult& r);

}  // namespace bulkhead
