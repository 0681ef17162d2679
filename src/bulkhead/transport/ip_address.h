// IpAddress and CidrRange: IPv4/IPv6 addresses as plain values, for the SSRF guard and for pinning
// libcurl to the addresses that were checked.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sockaddr;

namespace bulkhead {

// Thread-compatible value type. An IPv4 address keeps its 4 bytes in bytes()[0..3].
class IpAddress {
 public:
  // Strict textual forms only: dotted quad ("10.0.0.1") or RFC 4291 IPv6 ("::1", "::ffff:1.2.3.4"),
  // without brackets or zone. nullopt otherwise.
  static std::optional<IpAddress> Parse(std::string_view text);
  // From an AF_INET / AF_INET6 socket address; nullopt for other families.
  static std::optional<IpAddress> FromSockaddr(const sockaddr* address);
  static IpAddress V4(uint32_t host_order);
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);

  bool is_v4() const { return v4_; }
  const std::array<uint8_t, 16>& bytes() const { return bytes_; }
  // The IPv4 address in host order; meaningful only when is_v4().
  uint32_t v4() const;
  // Canonical text ("10.0.0.1", "::ffff:127.0.0.1").
  std::string ToString() const;
  // Text usable in a URL or in CURLOPT_RESOLVE: IPv6 in brackets.
  std::string ToUriString() const;

  bool operator==(const IpAddress&) const = default;

 private:
  IpAddress() = default;
  bool v4_ = true;
  std::array<uint8_t, 16> bytes_{};
};

// An address prefix such as 10.0.0.0/8 or fc00::/7. Thread-compatible value type.
class CidrRange {
 public:
  // "10.0.0.0/8", "fe80::/10"; a bare address means a single-address range. nullopt when malformed.
  static std::optional<CidrRange> Parse(std::string_view text);

  // False for an address of the other family.
  bool Contains(const IpAddress& address) const;
  std::string ToString() const;

 private:
  CidrRange(IpAddress base, int prefix_length) : base_(base), prefix_length_(prefix_length) {}
  IpAddress base_;
  int prefix_length_;
};

}  // namespace bulkhead
