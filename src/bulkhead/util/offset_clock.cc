#include "bulkhead/util/offset_clock.h"

#include <chrono>
#include <string>

namespace bulkhead {
namespace {

constexpr int64_t kMaxOffsetUs = kMaxClockOffsetSeconds * 1'000'000;

}  // namespace

TimePoint OffsetClock::Now() const {
  return base_.Now() + std::chrono::microseconds(offset_us_.load());
}

Status OffsetClock::Advance(Duration by) {
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(by).count();
  if (us < 0)
    return Status::InvalidArgument("the clock only moves forward, not by a negative time");
  int64_t current = offset_us_.load();
  do {
    if (us > kMaxOffsetUs - current) {
      return Status::InvalidArgument("the clock moves at most 10 years ahead in all; it is " +
                                     std::to_string(current / 1'000'000) + " s ahead already");
    }
  } while (!offset_us_.compare_exchange_weak(current, current + us));
  return Status::Ok();
}

Duration OffsetClock::offset() const {
  return std::chrono::duration_cast<Duration>(std::chrono::microseconds(offset_us_.load()));
}

}  // namespace bulkhead
