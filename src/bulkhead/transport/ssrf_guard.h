// SsrfGuard: decides whether the transport may connect to an address, so that a delivery URL chosen
// by a remote party cannot reach loopback, the private network, cloud metadata endpoints and other
// non-public space. Every resolved address is checked before connecting, and the connection is then
// pinned to the checked addresses (see CurlTransport).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/transport/ip_address.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Why an address is not public: the range it falls in and that range's name. For IPv6 forms that
// embed an IPv4 address (IPv4-mapped, NAT64, 6to4) the IPv4 address is checked and named too.
struct NonPublicRange {
  std::string range;                     // "127.0.0.0/8"
  std::string description;               // "loopback"
  std::optional<IpAddress> embedded_v4;  // set when the verdict comes from an embedded IPv4
};

// The special-purpose range `address` falls in, or nullopt when it is a public unicast address.
// Refused: IPv4 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24,
// 192.88.99/24, 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4, 240/4 (with
// 255.255.255.255); IPv6 ::, ::1, ::/96 (IPv4-compatible, deprecated), 100::/64, 2001::/32
// (Teredo), 2001:2::/48, 2001:10::/28, 2001:20::/28, 2001:db8::/32, 3fff::/20, 64:ff9b:1::/48,
// fc00::/7, fe80::/10, fec0::/10, ff00::/8. ::ffff:0:0/96, 64:ff9b::/96 and 2002::/16 are judged by
// the IPv4 address they carry.
std::optional<NonPublicRange> FindNonPublicRange(const IpAddress& address);

struct SsrfPolicy {
  // Turns every refusal off and allows plain http (tests, `serve --allow-private-targets`).
  bool allow_private_targets = false;
  // Exceptions: non-public ranges that may be reached anyway (like Mastodon's
  // ALLOWED_PRIVATE_ADDRESSES). Plain http stays refused.
  std::vector<CidrRange> allowed_ranges;
};

// Thread-safe after construction (immutable).
class SsrfGuard {
 public:
  explicit SsrfGuard(SsrfPolicy policy) : policy_(std::move(policy)) {}

  // OK when a connection to `address` is allowed. PermissionDenied otherwise, with a message that
  // names the address and the range, e.g. "address 127.0.0.1 is in 127.0.0.0/8 (loopback)".
  Status CheckAddress(const IpAddress& address) const;

  // OK for "https", and for "http" only when private targets are allowed. PermissionDenied
  // otherwise. Case-insensitive.
  Status CheckScheme(std::string_view scheme) const;

  // The libcurl protocol list matching CheckScheme: "https" or "http,https".
  const char* CurlProtocols() const;

  bool allow_private_targets() const { return policy_.allow_private_targets; }

 private:
  const SsrfPolicy policy_;
};

}  // namespace bulkhead
