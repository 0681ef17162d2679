// Timer: a one-shot wait on an event loop, measured by the injected Clock — the timer of every
// deadline the server keeps (session handshake and line timeouts, FETCH block times, the engine's
// periodic tasks). Its interface is boost::asio::steady_timer's: a handler gets an error_code,
// boost::asio::error::operation_aborted when the wait was cancelled, replaced or destroyed.
//
// With a clock that has a TimerSource (SimulatedClock, util/simulated_clock.h) the wait ends
// when that clock is moved past the deadline; with any other clock (SystemClock) it is a
// steady_timer: the delay passes on the monotonic clock, whatever the wall clock does. The
// steady_timer path is the production one and costs what a bare steady_timer costs: no
// allocation of its own and no type-erased handler.
//
// Threading: a Timer is used on its loop's thread only; handlers run on that loop.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
#include <functional>
#include <memory>

#include "bulkhead/util/clock.h"

namespace bulkhead {

using TimerHandler = std::function<void(boost::system::error_code)>;

// A clock that runs the timers measured on it (instead of the monotonic clock).
class TimerSource {
 public:
  // One timer's waits, as Timer's interface.
  class Wait {
   public:
    virtual ~Wait() = default;  // cancels
    virtual void ExpiresAfter(Duration delay) = 0;
    virtual void AsyncWait(TimerHandler handler) = 0;
    virtual void Cancel() = 0;
  };
  virtual ~TimerSource() = default;
  // A timer whose handlers are posted to `io`.
  virtual std::unique_ptr<Wait> NewWait(boost::asio::io_context& io) const = 0;
};

class Timer {
 public:
  Timer(boost::asio::io_context& io, const Clock& clock);
  ~Timer();  // cancels the pending waits
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Sets the deadline `delay` from now by the clock; pending waits are cancelled.
  void ExpiresAfter(Duration delay);
  // `handler` runs on the loop at the deadline (at once, posted, if it has passed) or, cancelled,
  // with operation_aborted. A handler already due runs with success even if cancelled after.
  // On a steady_timer the handler is handed over as it is; on a TimerSource it becomes a
  // TimerHandler (so it must be copyable).
  template <typename Handler>
  void AsyncWait(Handler&& handler) {
    if (simulated_) {
      simulated_->AsyncWait(TimerHandler(std::forward<Handler>(handler)));
    } else {
      steady_.async_wait(std::forward<Handler>(handler));
    }
  }
  void Cancel();

 private:
  boost::asio::steady_timer steady_;              // the wait unless the clock has a TimerSource
  std::unique_ptr<TimerSource::Wait> simulated_;  // the clock's TimerSource wait, or null
};

}  // namespace bulkhead
