#include "bulkhead/util/timer.h"

#include <boost/asio/io_context.hpp>

namespace bulkhead {
namespace {

std::unique_ptr<TimerSource::Wait> NewSimulatedWait(boost::asio::io_context& io,
                                                    const Clock& clock) {
  if (const TimerSource* source = clock.timer_source()) return source->NewWait(io);
  return nullptr;
}

}  // namespace

Timer::Timer(boost::asio::io_context& io, const Clock& clock)
    : steady_(io), simulated_(NewSimulatedWait(io, clock)) {}

Timer::~Timer() = default;

void Timer::ExpiresAfter(Duration delay) {
  if (simulated_) {
    simulated_->ExpiresAfter(delay);
  } else {
    steady_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay));
  }
}

void Timer::Cancel() {
  if (simulated_) {
    simulated_->Cancel();
  } else {
    steady_.cancel();
  }
}

}  // namespace bulkhead
