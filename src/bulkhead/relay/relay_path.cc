#include "bulkhead/relay/relay_path.h"

#include <vector>

#include "bulkhead/util/hex.h"
#include "bulkhead/util/percent_encoding.h"

namespace bulkhead {
namespace {

constexpr std::string_view kPrefix = "/relay-to/";
// APNs device tokens are 32 bytes written in hex today; Apple says they may grow, so up to 200.
constexpr size_t kMaxApnsToken = 200;
// FCM registration tokens are about 160 characters; 4096 leaves room and bounds the job.
constexpr size_t kMaxFcmToken = 4096;
constexpr size_t kMaxExtra = 1024;

Result<std::string> DecodeSegment(std::string_view s) {
  auto out = PercentDecode(s);
  if (!out.ok()) return Status::InvalidArgument("bad percent-encoding in the path");
  return out;
}

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = s.find('/', start);
    parts.push_back(s.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

Status CheckToken(RelayService service, const std::string& token) {
  if (token.empty()) return Status::InvalidArgument("the device token is missing");
  if (service == RelayService::kApns) {
    if (token.size() > kMaxApnsToken)
      return Status::InvalidArgument("the device token is too long");
    for (char c : token) {
      if (HexDigitValue(c) < 0)
        return Status::InvalidArgument("the device token must be hexadecimal");
    }
    return Status::Ok();
  }
  if (token.size() > kMaxFcmToken) {
    return Status::InvalidArgument("the registration token is too long");
  }
  for (char c : token) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == ':' || c == '.';
    if (!ok) {
      return Status::InvalidArgument(
          "the registration token may hold only letters, digits, '_', '-', ':' and '.'");
    }
  }
  return Status::Ok();
}

// Reads the service word; false when `word` is none.
bool ReadService(std::string_view word, RelayTarget& target) {
  if (word == "production" || word == "development") {
    target.service = RelayService::kApns;
    target.production = word == "production";
    return true;
  }
  if (word == "fcm") {
    target.service = RelayService::kFcm;
    return true;
  }
  return false;
}

}  // namespace

const char* RelayServiceName(RelayService service) {
  return service == RelayService::kApns ? "apns" : "fcm";
}

Result<RelayTarget> ParseRelayPath(std::string_view path) {
  if (path.substr(0, kPrefix.size()) != kPrefix) {
    return Status::NotFound("not a relay path: the relay serves /relay-to/...");
  }
  std::vector<std::string_view> parts = Split(path.substr(kPrefix.size()));
  RelayTarget target;
  size_t next = 0;
  if (!ReadService(parts[0], target)) {
    if (parts.size() < 2 || !ReadService(parts[1], target)) {
      return Status::InvalidArgument("unknown environment \"" + std::string(parts[0]) +
                                     "\": the path is /relay-to/[APP/]production|development|"
                                     "fcm/TOKEN[/EXTRA]");
    }
    auto app = DecodeSegment(parts[0]);
    if (!app.ok()) return app.status();
    target.app = std::move(*app);
    next = 1;
  }
  if (parts.size() < next + 2) return Status::InvalidArgument("the device token is missing");
  auto token = DecodeSegment(parts[next + 1]);
  if (!token.ok()) return token.status();
  target.token = std::move(*token);
  if (Status s = CheckToken(target.service, target.token); !s.ok()) return s;
  std::string extra;
  for (size_t i = next + 2; i < parts.size(); ++i) {
    if (i > next + 2) extra += '/';
    extra += parts[i];
  }
  auto decoded = DecodeSegment(extra);
  if (!decoded.ok()) return decoded.status();
  if (decoded->size() > kMaxExtra) {
    return Status::InvalidArgument("the path after the token is longer than " +
                                   std::to_string(kMaxExtra) + " bytes");
  }
  target.extra = std::move(*decoded);
  return target;
}

}  // namespace bulkhead
