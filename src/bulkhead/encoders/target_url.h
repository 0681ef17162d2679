// TargetUrl: the parts of an absolute http(s) URL that outbound encoders need (Web Push endpoints,
// ActivityPub inboxes): scheme, host, port, and the request target. Deliberately small: it accepts
// only what a delivery target may look like and refuses everything else with a clear message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

// A parsed absolute URL. Value type, thread-compatible.
struct TargetUrl {
  std::string scheme;  // "https" or "http", lowercase
  std::string host;    // lowercase; IPv6 literals keep their brackets ("[::1]")
  uint16_t port = 0;   // explicit port, or the scheme's default (443 / 80)
  bool explicit_port = false;
  std::string target;  // path plus "?query" as written, "/" when the URL has no path

  bool default_port() const { return port == (scheme == "https" ? 443 : 80); }
  // "host" or "host:port" when the port is not the scheme's default: the Host header value.
  std::string Authority() const;
  // "scheme://host[:port]" (RFC 6454 serialisation of the origin): the VAPID audience.
  std::string Origin() const;
};

// Largest URL accepted, in bytes.
inline constexpr size_t kMaxTargetUrlLength = 4096;

// Parses an absolute "http://" or "https://" URL. Refuses (InvalidArgument, message names the
// problem): other schemes, an empty host, userinfo ("user@host"), a bad or zero port, a fragment,
// whitespace, control or non-ASCII bytes, and URLs longer than kMaxTargetUrlLength. Does not
// resolve or percent-decode anything.
Result<TargetUrl> ParseTargetUrl(std::string_view url);

}  // namespace bulkhead
