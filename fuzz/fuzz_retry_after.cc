// Fuzz target: Retry-After header values (src/bulkhead/compartment/retry_after.h).
// Input: the raw header value, as a remote host sends it. Checked for every bound the dispatcher
// may pass (0, the default 3600 s, the 366-day ceiling, and out-of-range bounds the parser clamps):
// no crash or UB, and a result always lies in [now, now + clamped bound].
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "bulkhead/compartment/retry_after.h"

namespace {

using namespace std::chrono;
using bulkhead::Duration;
using bulkhead::TimePoint;

void Check(std::string_view value, TimePoint now, Duration max_delay) {
  std::optional<TimePoint> t = bulkhead::ParseRetryAfter(value, now, max_delay);
  if (!t) return;
  Duration bound = std::clamp<Duration>(max_delay, Duration::zero(), hours(24 * 366));
  if (*t < now || *t > now + bound) {
    std::fprintf(stderr, "ParseRetryAfter returned a time outside [now, now + max_delay]\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  // A fixed "now" keeps a crash reproducible: 2026-01-01T00:00:00Z, and the epoch itself.
  const TimePoint now = TimePoint(duration_cast<Duration>(seconds(1'767'225'600)));
  const TimePoint epoch{};
  for (Duration max_delay : {Duration::zero(), duration_cast<Duration>(seconds(3600)),
                             duration_cast<Duration>(hours(24 * 366)), Duration::max(),
                             Duration::min(), duration_cast<Duration>(seconds(-5))}) {
    Check(value, now, max_delay);
    Check(value, epoch, max_delay);
  }
  return 0;
}
