// SimulatedClock: a clock for tests that moves only when told (as ManualClock) and runs the
// Timers (util/timer.h) measured on it, so that a test of a timeout moves time instead of waiting
// for it. Advance() moves the time and posts, in deadline order, the handler of every wait that
// fell due to its loop; the loop runs it when it runs. A periodic task re-arms from the time its
// handler runs, so one Advance fires it once, however far the time moved.
//
// A test whose loop runs on another thread (a server on real sockets) calls Settle() before
// moving time: it returns once each loop with a timer on this clock has polled its sockets and run
// what that completed, so the timers armed by what the test sent are armed.
//
// Thread-safe. Timers made on it must be destroyed before it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/timer.h"

namespace bulkhead {

class SimulatedClock final : public Clock, public TimerSource {
 public:
  explicit SimulatedClock(TimePoint start = FromUnixMicros(1'700'000'000'000'000));
  ~SimulatedClock() override;

  TimePoint Now() const override;
  const TimerSource* timer_source() const override { return this; }
  // Moves the time forward by `d` and fires the waits due by then.
  void Advance(Duration d);
  // Waits, up to `limit` of real time, until every loop with a timer on this clock ran what was
  // ready (see the file comment). Never call it on such a loop. False on timeout.
  bool Settle(std::chrono::milliseconds limit = std::chrono::seconds(10)) const;
  // The earliest deadline of a pending wait.
  std::optional<TimePoint> NextDeadline() const;

  std::unique_ptr<Wait> NewWait(boost::asio::io_context& io) const override;

 private:
  class SimulatedWait;
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace bulkhead
