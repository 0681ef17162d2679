#include "bulkhead/encoders/target_url.h"

#include <cctype>

#include "bulkhead/util/ascii.h"

namespace bulkhead {
namespace {

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

}  // namespace

std::string TargetUrl::Authority() const {
  if (default_port()) return host;
  return host + ":" + std::to_string(port);
}

std::string TargetUrl::Origin() const { return scheme + "://" + Authority(); }

namespace {

// The host and port text of a URL authority (no userinfo). An IPv6 literal keeps its brackets;
// explicit_port is set when a port is written, even an empty one.
struct UrlAuthority {
  std::string_view host;
  std::string_view port;
  bool explicit_port = false;
};

Result<UrlAuthority> SplitAuthority(std::string_view authority) {
  UrlAuthority out;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("URL has an unclosed '['");
    out.host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Status::InvalidArgument("URL has junk after ']'");
      out.port = after.substr(1);
      out.explicit_port = true;
    }
    for (char c : out.host.substr(1, out.host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return Status::InvalidArgument("URL has a bad IPv6 literal");
      }
    }
    if (out.host.size() < 3) return Status::InvalidArgument("URL has an empty IPv6 literal");
  } else {
    size_t pc = authority.find(':');
    out.host = authority.substr(0, pc);
    if (pc != std::string_view::npos) {
      out.port = authority.substr(pc + 1);
      out.explicit_port = true;
    }
    for (char c : out.host) {
      if (!IsHostChar(c)) {
        return Status::InvalidArgument(std::string("URL host has a bad character '") + c + "'");
      }
    }
  }
  return out;
}

// A written port: 1 to 65535, digits only.
Result<uint16_t> ParsePort(std::string_view port) {
  if (port.empty() || port.size() > 5) return Status::InvalidArgument("URL has a bad port");
  uint32_t p = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return Status::InvalidArgument("URL has a bad port");
    }
    p = p * 10 + static_cast<uint32_t>(c - '0');
  }
  if (p == 0 || p > 65535) return Status::InvalidArgument("URL port is out of range");
  return static_cast<uint16_t>(p);
}

}  // namespace

Result<TargetUrl> ParseTargetUrl(std::string_view url) {
  if (url.empty()) return Status::InvalidArgument("URL is empty");
  if (url.size() > kMaxTargetUrlLength) {
    return Status::InvalidArgument("URL is longer than " + std::to_string(kMaxTargetUrlLength) +
                                   " bytes");
  }
  for (char c : url) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return Status::InvalidArgument("URL contains whitespace, a control or a non-ASCII byte");
    }
  }
  TargetUrl out;
  size_t colon = url.find("://");
  if (colon == std::string_view::npos) return Status::InvalidArgument("URL has no scheme");
  out.scheme = AsciiLower(url.substr(0, colon));
  if (out.scheme != "https" && out.scheme != "http") {
    return Status::InvalidArgument("URL scheme must be https or http, got '" + out.scheme + "'");
  }
  std::string_view rest = url.substr(colon + 3);
  if (rest.find('#') != std::string_view::npos) {
    return Status::InvalidArgument("URL must not have a fragment");
  }
  size_t end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end);
  std::string_view target = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument("URL must not contain userinfo");
  }
  Result<UrlAuthority> parts = SplitAuthority(authority);
  if (!parts.ok()) return parts.status();
  out.explicit_port = parts->explicit_port;
  if (parts->host.empty()) return Status::InvalidArgument("URL has an empty host");
  out.host = AsciiLower(parts->host);
  if (out.explicit_port) {
    Result<uint16_t> p = ParsePort(parts->port);
    if (!p.ok()) return p.status();
    out.port = *p;
  } else {
    out.port = out.scheme == "https" ? 443 : 80;
  }
  if (target.empty()) {
    out.target = "/";
  } else if (target.front() == '?') {
    out.target = "/" + std::string(target);
  } else {
    out.target = std::string(target);
  }
  return out;
}

}  // namespace bulkhead
