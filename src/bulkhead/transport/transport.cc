#include "bulkhead/transport/transport.h"

#include <cctype>

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

namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

}  // namespace bulkhead
