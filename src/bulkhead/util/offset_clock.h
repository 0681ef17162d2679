// OffsetClock: another clock's time plus an offset that only grows, for `bulkhead serve
// --testing-clock` (server/testing_clock_api.h). A test that must see what happens days later
// (a host failing for delivery.unavailable_after_days, a retry due tomorrow) moves the server's
// time forward instead of waiting. Timers still wait on the monotonic clock (timer_source() is
// null, as for SystemClock): what they decide by Now() sees the moved time when they next run.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The most an OffsetClock may be moved ahead: ten years, in seconds.
inline constexpr int64_t kMaxClockOffsetSeconds = int64_t{10} * 366 * 86400;

class OffsetClock final : public Clock {
 public:
  // `base` (usually SystemClock::Instance()) outlives this clock.
  explicit OffsetClock(const Clock& base) : base_(base) {}

  TimePoint Now() const override;
  // Moves the time forward by `by`. InvalidArgument when `by` is negative (time never goes
  // back: stored deadlines and failure periods assume it) or the offset would pass 10 years.
  Status Advance(Duration by);
  Duration offset() const;

 private:
  const Clock& base_;
  std::atomic<int64_t> offset_us_{0};
};

}  // namespace bulkhead
