#include "bulkhead/transport/transport.h"

#include <cctype>

namespace bulkhead {

const char* TransportErrorName(TransportError error) {
  switch (error) {
    case TransportError::kNone: return "none";
    case TransportError::kDns: return "dns";
    case TransportError::kConnectRefused: return "connect_refused";
    case TransportError::kConnectTimeout: return "connect_timeout";
    case TransportError::kTls: return "tls";
    case TransportError::kTimeoutFirstByte: return "timeout_first_byte";
    case TransportError::kTimeoutTotal: return "timeout_total";
    case TransportError::kLowSpeed: return "low_speed";
    case TransportError::kReset: return "reset";
    case TransportError::kSsrfRefused: return "ssrf_refused";
    case TransportError::kCancelled: return "cancelled";
    case TransportError::kOther: return "other";
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
