#pragma once

// Percent-encoding of URL components (RFC 3986 section 2.1).

#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

// Every byte except the unreserved characters (RFC 3986 section 2.3: ALPHA DIGIT - . _ ~) becomes
// %XX with upper-case hex digits, so the result is safe in a path segment, a query value or a
// form body.
std::string PercentEncode(std::string_view text);

// Decodes %XX escapes and leaves every other byte as it is ('+' included: form decoding is the
// caller's). An escape that is cut short or not hexadecimal is an InvalidArgument naming its
// byte offset; callers add what was being decoded.
Result<std::string> PercentDecode(std::string_view text);

}  // namespace bulkhead
