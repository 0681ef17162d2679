#include "bulkhead/redis/redis_url.h"

#include <charconv>

#include "bulkhead/util/percent_encoding.h"

namespace bulkhead {
namespace {

Status Invalid(std::string_view what, std::string_view part) {
  return Status::InvalidArgument("redis URL: " + std::string(what) + " in '" + std::string(part) +
                                 "'");
}

// Decodes %XX escapes; false when an escape is malformed.
bool DecodeUserinfo(std::string_view in, std::string* out) {
  auto decoded = PercentDecode(in);
  if (!decoded.ok()) return false;
  *out = std::move(*decoded);
  return true;
}

bool ParseNumber(std::string_view s, long long max, long long* out) {
  if (s.empty()) return false;
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0 || v > max) return false;
  *out = v;
  return true;
}

Result<RedisEndpoint> ParseHostPort(std::string_view part, uint16_t default_port) {
  RedisEndpoint ep;
  std::string_view rest;
  if (!part.empty() && part.front() == '[') {
    size_t close = part.find(']');
    if (close == std::string_view::npos) return Invalid("unterminated IPv6 address", part);
    ep.host = std::string(part.substr(1, close - 1));
    rest = part.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return Invalid("unexpected text after ']'", part);
  } else {
    size_t colon = part.find(':');
    ep.host = std::string(part.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : part.substr(colon);
  }
  if (ep.host.empty()) return Invalid("empty host", part);
  for (char c : ep.host) {
    if (c == '/' || c == '@' || c == '?' || c == '#' || c == ' ' || c == ',') {
      return Invalid("invalid character in host", part);
    }
  }
  ep.port = default_port;
  if (!rest.empty()) {
    long long port = 0;
    if (!ParseNumber(rest.substr(1), 65535, &port) || port == 0) {
      return Invalid("port must be a number in 1..65535", part);
    }
    ep.port = static_cast<uint16_t>(port);
  }
  return ep;
}

Status ParseUserInfo(std::string_view userinfo, RedisUrl* url) {
  size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    // "redis://secret@host" (no colon) is read as a password, as redis-cli and Sidekiq do.
    if (!DecodeUserinfo(userinfo, &url->password)) {
      return Status::InvalidArgument("redis URL: malformed %-escape in the password");
    }
    return Status::Ok();
  }
  if (!DecodeUserinfo(userinfo.substr(0, colon), &url->username)) {
    return Invalid("malformed %-escape in the user name", userinfo.substr(0, colon));
  }
  if (!DecodeUserinfo(userinfo.substr(colon + 1), &url->password)) {
    return Status::InvalidArgument("redis URL: malformed %-escape in the password");
  }
  return Status::Ok();
}

Status ParseDb(std::string_view s, RedisUrl* url) {
  long long db = 0;
  if (!ParseNumber(s, 2147483647LL, &db)) return Invalid("db must be a non-negative number", s);
  url->db = static_cast<int>(db);
  return Status::Ok();
}

// `path` is what follows the authority, without its leading '/'.
Status ParsePath(std::string_view path, RedisUrl* url) {
  if (url->scheme != RedisUrl::Scheme::kSentinel) {
    if (path.empty()) return Status::Ok();
    return ParseDb(path, url);
  }
  size_t slash = path.find('/');
  url->master_name = std::string(path.substr(0, slash));
  if (url->master_name.empty()) {
    return Status::InvalidArgument(
        "redis URL: redis-sentinel:// needs the master name after the hosts "
        "(redis-sentinel://host:26379/MASTERNAME)");
  }
  if (slash == std::string_view::npos) return Status::Ok();
  return ParseDb(path.substr(slash + 1), url);
}

}  // namespace

std::string RedisEndpoint::ToString() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::string RedisUrl::Redacted() const {
  std::string out;
  switch (scheme) {
    case Scheme::kRedis:
      out = "redis://";
      break;
    case Scheme::kRediss:
      out = "rediss://";
      break;
    case Scheme::kSentinel:
      out = "redis-sentinel://";
      break;
  }
  if (!username.empty() || !password.empty()) {
    out += username;
    if (!password.empty()) out += ":***";
    out += "@";
  }
  for (size_t i = 0; i < endpoints.size(); ++i) {
    if (i > 0) out += ",";
    out += endpoints[i].ToString();
  }
  if (scheme == Scheme::kSentinel) out += "/" + master_name;
  out += "/" + std::to_string(db);
  return out;
}

Result<RedisUrl> ParseRedisUrl(std::string_view text) {
  RedisUrl url;
  size_t sep = text.find("://");
  if (sep == std::string_view::npos) {
    // The text may hold a password: quote it only when it has no '@'.
    std::string shown = text.find('@') == std::string_view::npos ? std::string(text) : "(redacted)";
    return Status::InvalidArgument(
        "redis URL: expected redis://, rediss:// or redis-sentinel://, got '" + shown + "'");
  }
  std::string_view scheme = text.substr(0, sep);
  if (scheme == "redis") {
    url.scheme = RedisUrl::Scheme::kRedis;
  } else if (scheme == "rediss") {
    url.scheme = RedisUrl::Scheme::kRediss;
  } else if (scheme == "redis-sentinel") {
    url.scheme = RedisUrl::Scheme::kSentinel;
  } else {
    return Invalid("unknown scheme (expected redis, rediss or redis-sentinel)", scheme);
  }
  std::string_view rest = text.substr(sep + 3);
  size_t path_start = rest.find('/');
  std::string_view authority = rest.substr(0, path_start);
  std::string_view path =
      path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start + 1);
  // The password may contain '@' or '/' only percent-escaped; the last '@' ends the user info.
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    Status s = ParseUserInfo(authority.substr(0, at), &url);
    if (!s.ok()) return s;
    authority = authority.substr(at + 1);
  }
  if (authority.empty()) return Invalid("missing host", url.Redacted());
  uint16_t default_port =
      url.scheme == RedisUrl::Scheme::kSentinel ? kSentinelDefaultPort : kRedisDefaultPort;
  while (true) {
    size_t comma = authority.find(',');
    Result<RedisEndpoint> ep = ParseHostPort(authority.substr(0, comma), default_port);
    if (!ep.ok()) return ep.status();
    url.endpoints.push_back(std::move(*ep));
    if (comma == std::string_view::npos) break;
    authority = authority.substr(comma + 1);
  }
  if (url.endpoints.size() > 1 && url.scheme != RedisUrl::Scheme::kSentinel) {
    return Invalid("several hosts are only allowed in redis-sentinel:// URLs",
                   url.endpoints[1].ToString());
  }
  Status s = ParsePath(path, &url);
  if (!s.ok()) return s;
  return url;
}

}  // namespace bulkhead
