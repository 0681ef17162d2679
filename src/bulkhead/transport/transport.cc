#include "bulkhead/transport/transport.h"

#include <cctype>

#include "bulkhead/util/ascii.h"

namespace bulkhead {

const char* TransportErrorName(TransportError error) {
  switch (error) {
    case TransportError::kNone:
      return "none";
    case TransportError::kDns:
      return "dns";
    case TransportError::kConnectRefused:
      return "connect_refused";
    case TransportError::kConnectTimeout:
      return "connect_timeout";
    case TransportError::kTls:
      return "tls";
    case TransportError::kTimeoutFirstByte:
      return "timeout_first_byte";
    case TransportError::kTimeoutTotal:
      return "timeout_total";
    case TransportError::kLowSpeed:
      return "low_speed";
    case TransportError::kReset:
      return "reset";
    case TransportError::kSsrfRefused:
      return "ssrf_refused";
    case TransportError::kTooManyRedirects:
      return "too_many_redirects";
    case TransportError::kCancelled:
      return "cancelled";
    case TransportError::kOther:
      return "other";
  }
  return "other";
}

bool IsTimeout(TransportError error) {
  return error == TransportError::kConnectTimeout || error == TransportError::kTimeoutFirstByte ||
         error == TransportError::kTimeoutTotal || error == TransportError::kLowSpeed;
}

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

}  // namespace bulkhead
