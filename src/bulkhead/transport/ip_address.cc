#include "bulkhead/transport/ip_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>

namespace bulkhead {

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  IpAddress a;
  if (inet_pton(AF_INET, buf, a.bytes_.data()) == 1) {
    a.v4_ = true;
    return a;
  }
  if (inet_pton(AF_INET6, buf, a.bytes_.data()) == 1) {
    a.v4_ = false;
    return a;
  }
  return std::nullopt;
}

std::optional<IpAddress> IpAddress::FromSockaddr(const sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  IpAddress a;
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    std::memcpy(a.bytes_.data(), &in->sin_addr, 4);
    a.v4_ = true;
    return a;
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    std::memcpy(a.bytes_.data(), &in6->sin6_addr, 16);
    a.v4_ = false;
    return a;
  }
  return std::nullopt;
}

IpAddress IpAddress::V4(uint32_t host_order) {
  IpAddress a;
  a.v4_ = true;
  a.bytes_[0] = static_cast<uint8_t>(host_order >> 24);
  a.bytes_[1] = static_cast<uint8_t>(host_order >> 16);
  a.bytes_[2] = static_cast<uint8_t>(host_order >> 8);
  a.bytes_[3] = static_cast<uint8_t>(host_order);
  return a;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  IpAddress a;
  a.v4_ = false;
  a.bytes_ = bytes;
  return a;
}

uint32_t IpAddress::v4() const {
  return (uint32_t{bytes_[0]} << 24) | (uint32_t{bytes_[1]} << 16) | (uint32_t{bytes_[2]} << 8) |
         uint32_t{bytes_[3]};
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(v4_ ? AF_INET : AF_INET6, bytes_.data(), buf, sizeof(buf));
  return buf;
}

std::string IpAddress::ToUriString() const { return v4_ ? ToString() : "[" + ToString() + "]"; }

std::optional<CidrRange> CidrRange::Parse(std::string_view text) {
  size_t slash = text.find('/');
  std::optional<IpAddress> base = IpAddress::Parse(text.substr(0, slash));
  if (!base) return std::nullopt;
  int max = base->is_v4() ? 32 : 128;
  int length = max;
  if (slash != std::string_view::npos) {
    std::string_view digits = text.substr(slash + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
    if (ec != std::errc() || end != digits.data() + digits.size() || length < 0 || length > max) {
      return std::nullopt;
    }
  }
  return CidrRange(*base, length);
}

bool CidrRange::Contains(const IpAddress& address) const {
  if (address.is_v4() != base_.is_v4()) return false;
  const auto& a = address.bytes();
  const auto& b = base_.bytes();
  int full = prefix_length_ / 8;
  for (int i = 0; i < full; ++i) {
    if (a[i] != b[i]) return false;
  }
  int rest = prefix_length_ % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[full] & mask) == (b[full] & mask);
}

std::string CidrRange::ToString() const {
  return base_.ToString() + "/" + std::to_string(prefix_length_);
}

}  // namespace bulkhead
