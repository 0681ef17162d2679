// HTTP Basic authentication for the dashboard, as Faktory's Web UI does it: any user name, the
// server's password (the Faktory protocol's). Without a password every request passes.
#pragma once

#include <string_view>

namespace bulkhead::dashboard {

// True when `password` is empty, or `authorization` (the header's value, possibly empty) is
// "Basic base64(user:password)" for any user. Constant time in the password's content.
bool BasicAuthMatches(std::string_view authorization, std::string_view password);

// The WWW-Authenticate value of the 401 answer.
inline constexpr char kBasicChallenge[] = "Basic realm=\"bulkhead\", charset=\"UTF-8\"";

}  // namespace bulkhead::dashboard
