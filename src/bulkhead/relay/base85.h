// Base85 as the Mastodon push relays write it (mastodon/webpush-apn-relay main.go and
// mastodon/webpush-fcm-relay webpush-fcm-relay.go, `encode85`), which the apps' decryption code
// reads (e.g. Toot!, Ivory, Tusky): the Z85 alphabet of ZeroMQ's RFC 32, each 4-byte block
// read big-endian and written as 5 digits, most significant first; a tail of n bytes (1..3), read
// big-endian as an n-byte number, written as n + 1 digits. Unlike Z85 the input need not be a
// multiple of 4 bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

inline constexpr char kRelayBase85Alphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

// The encoded length of `bytes` bytes: 5 per block of 4, n + 1 for a tail of n.
size_t Base85Length(size_t bytes);

std::string Base85Encode(std::string_view bytes);

// The inverse, for tests and tools. InvalidArgument for a character outside the alphabet, a
// length no input encodes to, or a group that overflows its bytes.
Result<std::string> Base85Decode(std::string_view text);

}  // namespace bulkhead
