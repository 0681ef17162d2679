#include "bulkhead/compartment/outcome.h"

namespace bulkhead {

namespace {

// The coarse reason stored for a transport failure (see Classify's contract in outcome.h).
const char* FailureReason(TransportError e) {
  switch (e) {
    case TransportError::kNone:
      return "none";
    case TransportError::kConnectTimeout:
    case TransportError::kTimeoutFirstByte:
    case TransportError::kTimeoutTotal:
    case TransportError::kLowSpeed:
      return "timeout";
    case TransportError::kConnectRefused:
      return "connect_error";
    case TransportError::kDns:
      return "dns_error";
    case TransportError::kReset:
      return "connection_reset";
    case TransportError::kTls:
      return "tls_error";
    case TransportError::kSsrfRefused:
      return "blocked_address";
    case TransportError::kTooManyRedirects:
      return "too_many_redirects";
    case TransportError::kCancelled:
    case TransportError::kOther:
      return "other";
  }
  return "other";
}

}  // namespace

const char* OutcomeClassName(OutcomeClass c) {
  switch (c) {
    case OutcomeClass::kOk:
      return "ok";
    case OutcomeClass::kGone:
      return "gone";
    case OutcomeClass::kPermanent:
      return "permanent";
    case OutcomeClass::kRetryable:
      return "retryable";
  }
  return "unknown";
}

const char* HostSignalName(HostSignal s) {
  switch (s) {
    case HostSignal::kHealthy:
      return "healthy";
    case HostSignal::kFailure:
      return "failure";
    case HostSignal::kOverloaded:
      return "overloaded";
    case HostSignal::kNone:
      return "none";
  }
  return "unknown";
}

Outcome Classify(JobKind kind, const AttemptResult& r) {
  switch (r.error) {
    case TransportError::kNone:
      break;
    case TransportError::kConnectTimeout:
    case TransportError::kTimeoutFirstByte:
    case TransportError::kTimeoutTotal:
    case TransportError::kLowSpeed:
    case TransportError::kConnectRefused:
    case TransportError::kDns:
    case TransportError::kReset:
    case TransportError::kTls:
      return {OutcomeClass::kRetryable, HostSignal::kFailure, FailureReason(r.error)};
    case TransportError::kSsrfRefused:
    case TransportError::kTooManyRedirects:
      return {OutcomeClass::kPermanent, HostSignal::kNone, FailureReason(r.error)};
    case TransportError::kCancelled:
    case TransportError::kOther:
      return {OutcomeClass::kRetryable, HostSignal::kNone, FailureReason(r.error)};
  }

  const int code = r.http_status;
  std::string reason = "http " + std::to_string(code);
  if (code >= 200 && code <= 299) {
    return {OutcomeClass::kOk, HostSignal::kHealthy, std::move(reason), code};
  }
  if (code == 429 || code == 503) {
    return {OutcomeClass::kRetryable, HostSignal::kOverloaded, std::move(reason), code};
  }
  if (code == 408 || (code >= 500 && code <= 599)) {
    return {OutcomeClass::kRetryable, HostSignal::kFailure, std::move(reason), code};
  }
  if (kind == JobKind::kWebPush && (code == 404 || code == 410)) {
    return {OutcomeClass::kGone, HostSignal::kHealthy, std::move(reason), code};
  }
  if (code >= 400 && code <= 499) {
    return {OutcomeClass::kPermanent, HostSignal::kHealthy, std::move(reason), code};
  }
  // 1xx or 3xx: the host answered, so it is reachable. Anything else is not an HTTP status at all;
  // say nothing about the host.
  const HostSignal host = (code >= 100 && code <= 399) ? HostSignal::kHealthy : HostSignal::kNone;
  return {OutcomeClass::kPermanent, host, std::move(reason), code};
}

int HttpStatusOfReason(std::string_view reason) {
  constexpr std::string_view kPrefix = "http ";
  if (reason.size() != kPrefix.size() + 3 || reason.substr(0, kPrefix.size()) != kPrefix) return 0;
  int code = 0;
  for (char c : reason.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return 0;
    code = code * 10 + (c - '0');
  }
  return code >= 100 && code <= 599 ? code : 0;
}

}  // namespace bulkhead
