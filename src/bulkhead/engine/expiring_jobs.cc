#include "bulkhead/engine/expiring_jobs.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "bulkhead/util/time_format.h"

namespace bulkhead {

using nlohmann::json;

Result<bool> PrepareExpiry(json& doc, TimePoint now) {
  auto custom = doc.find("custom");
  if (custom == doc.end() || !custom->is_object()) return false;
  std::optional<TimePoint> at;
  if (auto it = custom->find("expires_at"); it != custom->end() && !it->is_null()) {
    auto parsed = it->is_string() ? ParseRfc3339(it->get<std::string>())
                                  : Result<TimePoint>(Status::InvalidArgument("not a string"));
    if (!parsed.ok()) {
      return Status::InvalidArgument("custom.expires_at must be an RFC 3339 time, got " +
                                     it->dump() + " (" + parsed.status().message() + ")");
    }
    at = *parsed;
  }
  auto in = custom->find("expires_in");
  if (in == custom->end() || in->is_null()) return false;
  if (!in->is_number() || !std::isfinite(in->get<double>()) || in->get<double>() < 0 ||
      in->get<double>() > 1e9) {
    return Status::InvalidArgument(
        "custom.expires_in must be a non-negative number of seconds (at most 1e9), got " +
        in->dump());
  }
  TimePoint from_in =
      now + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(in->get<double>()));
  if (at && *at <= from_in) return false;
  (*custom)["expires_at"] = FormatRfc3339(from_in);
  return true;
}

std::optional<TimePoint> ExpiresAt(const json& doc) {
  auto custom = doc.find("custom");
  if (custom == doc.end() || !custom->is_object()) return std::nullopt;
  auto it = custom->find("expires_at");
  if (it == custom->end() || !it->is_string()) return std::nullopt;
  auto parsed = ParseRfc3339(it->get<std::string>());
  if (!parsed.ok()) return std::nullopt;
  return *parsed;
}

}  // namespace bulkhead
