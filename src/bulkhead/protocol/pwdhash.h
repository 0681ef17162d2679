// The Faktory password hash (FWP handshake): `iterations` rounds of SHA-256 over
// password ‖ salt, each later round hashing the previous raw 32-byte digest; lowercase hex.
#pragma once

#include <string>
#include <string_view>

namespace bulkhead {

// iterations < 1 is treated as 1 (what the reference server does for protocol v < 2).
std::string PasswordHash(std::string_view password, std::string_view salt, int iterations);

// Constant-time comparison of two strings (length is not hidden).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace bulkhead
