#include "bulkhead/transport/transport.h"

#include <cctype>

#include "bulkhead/util/ascii.h"

namespace bulkhead {

const char* TransportErrorKindName(TransportErrorKind error) {
  switch (error) {
    case TransportErrorKind::kNone: return "none";
    case TransportErrorKind::kDns: return "dns";
    case TransportErrorKind::kConnectRefused: return "connect_refused";
    case TransportErrorKind::kConnectTimeout: return "connect_timeout";
    case TransportErrorKind::kTls: return "tls";
    case TransportErrorKind::kTimeoutFirstByte: return "timeout_first_byte";
    case TransportErrorKind::kTimeoutTotal: return "timeout_total";
    case TransportErrorKind::kLowSpeed: return "low_speed";
    case TransportErrorKind::kReset: return "reset";
    case TransportErrorKind::kSsrfRefused: return "ssrf_refused";
    case TransportErrorKind::kTooManyRedirects: return "too_many_redirects";
    case TransportErrorKind::kCancelled: return "cancelled";
    case TransportErrorKind::kOther: return "other";
  }
  return "other";
}

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

}  // namespace bulkhead
