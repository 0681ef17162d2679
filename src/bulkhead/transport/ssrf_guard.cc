#include "bulkhead/transport/ssrf_guard.h"

#include <utility>

#include "bulkhead/util/ascii.h"

namespace bulkhead {
namespace {

struct NamedRange {
  CidrRange range;
  const char* description;
};

// How a range is judged: refused outright, or by the IPv4 address embedded at a byte offset.
enum class Rule { kRefuse, kEmbeddedV4 };

struct RangeRule {
  CidrRange range;
  const char* description;
  Rule rule;
  int v4_offset;  // for kEmbeddedV4: index of the first byte of the embedded IPv4 address
};

CidrRange MustParse(const char* text) { return *CidrRange::Parse(text); }

const std::vector<NamedRange>& V4Ranges() {
  // Order matters only for the name reported; the most specific range comes first.
  static const std::vector<NamedRange> ranges = {
      {MustParse("255.255.255.255/32"), "limited broadcast"},
      {MustParse("0.0.0.0/8"), "unspecified / \"this network\""},
      {MustParse("10.0.0.0/8"), "private (RFC 1918)"},
      {MustParse("100.64.0.0/10"), "carrier-grade NAT shared space (RFC 6598)"},
      {MustParse("127.0.0.0/8"), "loopback"},
      {MustParse("169.254.0.0/16"), "link-local (cloud metadata lives here)"},
      {MustParse("172.16.0.0/12"), "private (RFC 1918)"},
      {MustParse("192.0.0.0/24"), "IETF protocol assignments"},
      {MustParse("192.0.2.0/24"), "documentation (TEST-NET-1)"},
      {MustParse("192.88.99.0/24"), "6to4 relay anycast (deprecated)"},
      {MustParse("192.168.0.0/16"), "private (RFC 1918)"},
      {MustParse("198.18.0.0/15"), "benchmarking"},
      {MustParse("198.51.100.0/24"), "documentation (TEST-NET-2)"},
      {MustParse("203.0.113.0/24"), "documentation (TEST-NET-3)"},
      {MustParse("224.0.0.0/4"), "multicast"},
      {MustParse("240.0.0.0/4"), "reserved"},
  };
  return ranges;
}

const std::vector<RangeRule>& V6Rules() {
  static const std::vector<RangeRule> rules = {
      {MustParse("::/128"), "unspecified", Rule::kRefuse, 0},
      {MustParse("::1/128"), "loopback", Rule::kRefuse, 0},
      {MustParse("::ffff:0:0/96"), "IPv4-mapped", Rule::kEmbeddedV4, 12},
      {MustParse("::ffff:0:0:0/96"), "IPv4-translated", Rule::kEmbeddedV4, 12},
      {MustParse("::/96"), "IPv4-compatible (deprecated)", Rule::kRefuse, 0},
      {MustParse("64:ff9b::/96"), "NAT64", Rule::kEmbeddedV4, 12},
      {MustParse("64:ff9b:1::/48"), "local-use NAT64", Rule::kRefuse, 0},
      {MustParse("100::/64"), "discard-only", Rule::kRefuse, 0},
      {MustParse("2001::/32"), "Teredo", Rule::kRefuse, 0},
      {MustParse("2001:2::/48"), "benchmarking", Rule::kRefuse, 0},
      {MustParse("2001:10::/28"), "ORCHID (deprecated)", Rule::kRefuse, 0},
      {MustParse("2001:20::/28"), "ORCHIDv2", Rule::kRefuse, 0},
      {MustParse("2001:db8::/32"), "documentation", Rule::kRefuse, 0},
      {MustParse("2002::/16"), "6to4", Rule::kEmbeddedV4, 2},
      {MustParse("3fff::/20"), "documentation", Rule::kRefuse, 0},
      {MustParse("fc00::/7"), "unique local (private)", Rule::kRefuse, 0},
      {MustParse("fe80::/10"), "link-local", Rule::kRefuse, 0},
      {MustParse("fec0::/10"), "site-local (deprecated)", Rule::kRefuse, 0},
      {MustParse("ff00::/8"), "multicast", Rule::kRefuse, 0},
  };
  return rules;
}

std::optional<NonPublicRange> FindV4(const IpAddress& address) {
  for (const NamedRange& r : V4Ranges()) {
    if (r.range.Contains(address)) return NonPublicRange{r.range.ToString(), r.description, {}};
  }
  return std::nullopt;
}

}  // namespace

std::optional<NonPublicRange> FindNonPublicRange(const IpAddress& address) {
  if (address.is_v4()) return FindV4(address);
  for (const RangeRule& r : V6Rules()) {
    if (!r.range.Contains(address)) continue;
    if (r.rule == Rule::kRefuse) return NonPublicRange{r.range.ToString(), r.description, {}};
    const auto& b = address.bytes();
    IpAddress v4 =
        IpAddress::V4((uint32_t{b[r.v4_offset]} << 24) | (uint32_t{b[r.v4_offset + 1]} << 16) |
                      (uint32_t{b[r.v4_offset + 2]} << 8) | uint32_t{b[r.v4_offset + 3]});
    std::optional<NonPublicRange> inner = FindV4(v4);
    if (!inner) return std::nullopt;  // carries a public IPv4 address
    inner->description = std::string(r.description) + " " + r.range.ToString() + " carrying " +
                         v4.ToString() + ", " + inner->description;
    inner->embedded_v4 = v4;
    return inner;
  }
  return std::nullopt;
}

Status SsrfGuard::CheckAddress(const IpAddress& address) const {
  if (policy_.allow_private_targets) return Status::Ok();
  std::optional<NonPublicRange> range = FindNonPublicRange(address);
  if (!range) return Status::Ok();
  for (const CidrRange& allowed : policy_.allowed_ranges) {
    if (allowed.Contains(address) ||
        (range->embedded_v4 && allowed.Contains(*range->embedded_v4))) {
      return Status::Ok();
    }
  }
  return Status::PermissionDenied("address " + address.ToString() + " is in " + range->range +
                                  " (" + range->description + ")");
}

Status SsrfGuard::CheckScheme(std::string_view scheme) const {
  const std::string lower = AsciiLower(scheme);
  if (lower == "https") return Status::Ok();
  if (lower == "http" && policy_.allow_private_targets) return Status::Ok();
  if (lower == "http") {
    return Status::PermissionDenied(
        "scheme http refused: only https is allowed unless private targets are allowed");
  }
  return Status::PermissionDenied("scheme '" + std::string(scheme) + "' refused");
}

const char* SsrfGuard::CurlProtocols() const {
  return policy_.allow_private_targets ? "http,https" : "https";
}

}  // namespace bulkhead
