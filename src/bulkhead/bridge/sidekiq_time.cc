#include "bulkhead/bridge/sidekiq_time.h"

#include <cmath>
#include <cstdio>

namespace bulkhead {
namespace {

// 2255-03-14: later "times" are not times here (a TimePoint counts nanoseconds in 64 bits, which
// end in 2262).
constexpr double kLastSecond = 9'000'000'000.0;

}  // namespace

std::optional<SidekiqTimeFormat> ParseSidekiqTimeFormat(std::string_view setting) {
  if (setting == "seconds") return SidekiqTimeFormat::kFloatSeconds;
  if (setting == "milliseconds") return SidekiqTimeFormat::kIntegerMilliseconds;
  return std::nullopt;
}

nlohmann::json SidekiqTimestamp(TimePoint t, SidekiqTimeFormat format) {
  int64_t us = ToUnixMicros(t);
  if (format == SidekiqTimeFormat::kIntegerMilliseconds) return us / 1000;
  return static_cast<double>(us) / 1e6;
}

std::optional<TimePoint> ReadSidekiqTimestamp(const nlohmann::json& v) {
  double seconds;
  if (v.is_number_float()) {
    seconds = v.get<double>();
  } else if (v.is_number_integer()) {
    seconds = static_cast<double>(v.get<int64_t>()) / 1000.0;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(seconds) || seconds < 0 || seconds > kLastSecond) return std::nullopt;
  return FromUnixMicros(static_cast<int64_t>(std::llround(seconds * 1e6)));
}

std::string SidekiqScore(TimePoint t) {
  int64_t us = ToUnixMicros(t);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(us / 1000000),
                static_cast<long long>(us % 1000000));
  return buf;
}

}  // namespace bulkhead
