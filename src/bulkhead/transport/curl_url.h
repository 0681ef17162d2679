// UrlParts: the parts of a URL that SsrfGuard and the per-origin multi handles need, as libcurl's
// own URL parser sees them (so the guard checks exactly the host libcurl will connect to).
#pragma once

#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct UrlParts {
  std::string scheme;
  std::string host;  // without brackets
  long port = 0;     // the scheme's default port when the URL names none
};

// InvalidArgument when libcurl cannot parse `url`, or when its host carries an IPv6 zone id.
// Internal when libcurl cannot allocate its URL handle.
Result<UrlParts> ParseUrl(const std::string& url);

// The key of one origin: "scheme://host:port", lowercased.
std::string OriginKey(const UrlParts& url);

// Same scheme, host (both compared ignoring case) and port.
bool SameOrigin(const UrlParts& a, const UrlParts& b);

}  // namespace bulkhead
