// Base64 (RFC 4648 §4) and base64url (§5) encoding, as Web Push, VAPID and HTTP Signatures use
// them.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

// Standard alphabet with '=' padding.
std::string Base64Encode(std::string_view bytes);
// URL-safe alphabet, no padding (as JWT and Web Push keys are written).
std::string Base64UrlEncode(std::string_view bytes);

// Accepts either alphabet, with or without padding; whitespace is not allowed.
// InvalidArgument names the first bad character or a bad length.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace bulkhead
