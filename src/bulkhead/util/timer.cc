#include "bulkhead/util/timer.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

namespace bulkhead {
namespace {

// The production wait: a steady_timer, the delay measured on the monotonic clock.
class SteadyWait final : public TimerSource::Wait {
 public:
  explicit SteadyWait(boost::asio::io_context& io) : timer_(io) {}
  void ExpiresAfter(Duration delay) override {
    timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay));
  }
  void AsyncWait(TimerHandler handler) override { timer_.async_wait(std::move(handler)); }
  void Cancel() override { timer_.cancel(); }

 private:
  boost::asio::steady_timer timer_;
};

std::unique_ptr<TimerSource::Wait> NewWait(boost::asio::io_context& io, const Clock& clock) {
  if (const TimerSource* source = clock.timer_source()) return source->NewWait(io);
  return std::make_unique<SteadyWait>(io);
}

}  // namespace

Timer::Timer(boost::asio::io_context& io, const Clock& clock) : wait_(NewWait(io, clock)) {}

Timer::~Timer() = default;

}  // namespace bulkhead
