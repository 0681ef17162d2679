// RedisUrl: where a Redis store lives, parsed from a store URL.
//   redis://[[user]:password@]host[:port][/db]         plain TCP, port 6379
//   rediss://[[user]:password@]host[:port][/db]        TLS (certificate and host name verified)
//   redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTERNAME[/db]
//                                                     Sentinels (port 26379) naming the primary
// A host may be an IPv6 address in brackets ("[::1]:6379"). The user and password authenticate to
// the data nodes (the primary); Sentinels are asked without AUTH. Percent-escapes (%XX) are decoded
// in the user and password.
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct RedisEndpoint {
  std::string host;
  uint16_t port = 0;

  // "host:port", "[v6]:port" for IPv6 addresses.
  std::string ToString() const;
  bool operator==(const RedisEndpoint&) const = default;
};

struct RedisUrl {
  enum class Scheme { kRedis, kRediss, kSentinel };

  Scheme scheme = Scheme::kRedis;
  // kRedis/kRediss: exactly one (the server). kSentinel: the Sentinels, in the URL's order.
  std::vector<RedisEndpoint> endpoints;
  std::string username;  // empty: the default user (AUTH password)
  std::string password;  // empty: no AUTH
  int db = 0;
  std::string master_name;  // kSentinel only

  bool tls() const { return scheme == Scheme::kRediss; }
  // The URL for logs and errors: the password (if any) replaced by "***".
  std::string Redacted() const;
};

inline constexpr uint16_t kRedisDefaultPort = 6379;
inline constexpr uint16_t kSentinelDefaultPort = 26379;

// InvalidArgument naming the problem and the offending part (never the password) when `url` is
// not one of the forms above: unknown scheme, empty or malformed host, port not in 1..65535, db
// not a number in 0..2^31-1, missing MASTERNAME, several hosts outside redis-sentinel://.
Result<RedisUrl> ParseRedisUrl(std::string_view url);

}  // namespace bulkhead
