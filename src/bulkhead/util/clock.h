// Clock: the one source of "now" for everything that decides by time (retry, reaper, breaker,
// scheduling), and the clock the event loop's timers are measured by (util/timer.h). Production
// code uses SystemClock; tests use ManualClock and move time by hand, or SimulatedClock
// (util/simulated_clock.h) when timers must fire as the time moves.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace bulkhead {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::system_clock::duration;

// Microseconds since the Unix epoch, the unit bulkhead stores time in.
inline int64_t ToUnixMicros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
inline TimePoint FromUnixMicros(int64_t us) {
  return TimePoint(std::chrono::duration_cast<Duration>(std::chrono::microseconds(us)));
}

class TimerSource;  // util/timer.h

// Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time (UTC); used for timestamps that are stored or shown.
  virtual TimePoint Now() const = 0;
  // The source that runs timers measured by this clock (util/timer.h), or null when timers wait
  // on the monotonic clock (SystemClock, ManualClock).
  virtual const TimerSource* timer_source() const { return nullptr; }
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  // A process-wide instance.
  static SystemClock& Instance();
};

// A clock that only moves when told to. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = FromUnixMicros(1'700'000'000'000'000))
      : us_(ToUnixMicros(start)) {}
  TimePoint Now() const override { return FromUnixMicros(us_.load()); }
  void Advance(Duration d) {
    us_ += std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  }
  void Set(TimePoint t) { us_ = ToUnixMicros(t); }

 private:
  std::atomic<int64_t> us_;
};

}  // namespace bulkhead
