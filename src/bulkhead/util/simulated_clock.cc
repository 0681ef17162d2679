#include "bulkhead/util/simulated_clock.h"

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <set>
#include <vector>

namespace bulkhead {

// Shared by the clock and its waits. `mu` guards everything but `now_us`.
struct SimulatedClock::State {
  std::atomic<int64_t> now_us;
  mutable std::mutex mu;
  // Pending waits by deadline (then arrival): the wait and the handler.
  struct Pending {
    SimulatedWait* wait;
    TimerHandler handler;
  };
  std::multimap<TimePoint, Pending> pending;
  // The loops with live timers, and how many each has.
  std::map<boost::asio::io_context*, int> loops;
};

class SimulatedClock::SimulatedWait final : public TimerSource::Wait {
 public:
  SimulatedWait(std::shared_ptr<State> state, boost::asio::io_context& io)
      : state_(std::move(state)), io_(io), expiry_(FromUnixMicros(state_->now_us.load())) {
    std::lock_guard lock(state_->mu);
    state_->loops[&io_]++;
  }
  ~SimulatedWait() override {
    Cancel();
    std::lock_guard lock(state_->mu);
    if (--state_->loops[&io_] == 0) state_->loops.erase(&io_);
  }

  void ExpiresAfter(Duration delay) override {
    Cancel();
    expiry_ = FromUnixMicros(state_->now_us.load()) + delay;
  }

  void AsyncWait(TimerHandler handler) override {
    {
      std::lock_guard lock(state_->mu);
      if (expiry_ > FromUnixMicros(state_->now_us.load())) {
        state_->pending.emplace(expiry_, State::Pending{this, std::move(handler)});
        return;
      }
    }
    Post(io_, std::move(handler), {});
  }

  void Cancel() override {
    std::vector<TimerHandler> cancelled;
    {
      std::lock_guard lock(state_->mu);
      for (auto it = state_->pending.begin(); it != state_->pending.end();) {
        if (it->second.wait == this) {
          cancelled.push_back(std::move(it->second.handler));
          it = state_->pending.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& h : cancelled) Post(io_, std::move(h), boost::asio::error::operation_aborted);
  }

  boost::asio::io_context& io() { return io_; }

  static void Post(boost::asio::io_context& io, TimerHandler handler,
                   boost::system::error_code ec) {
    boost::asio::post(io, [h = std::move(handler), ec]() mutable { h(ec); });
  }

 private:
  std::shared_ptr<State> state_;
  boost::asio::io_context& io_;
  TimePoint expiry_;
};

SimulatedClock::SimulatedClock(TimePoint start) : state_(std::make_shared<State>()) {
  state_->now_us = ToUnixMicros(start);
}

SimulatedClock::~SimulatedClock() = default;

TimePoint SimulatedClock::Now() const { return FromUnixMicros(state_->now_us.load()); }

void SimulatedClock::Advance(Duration d) {
  struct Due {
    boost::asio::io_context* io;
    TimerHandler handler;
  };
  std::vector<Due> due;
  {
    std::lock_guard lock(state_->mu);
    state_->now_us += std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    TimePoint now = FromUnixMicros(state_->now_us.load());
    auto end = state_->pending.upper_bound(now);
    for (auto it = state_->pending.begin(); it != end; ++it) {
      due.push_back({&it->second.wait->io(), std::move(it->second.handler)});
    }
    state_->pending.erase(state_->pending.begin(), end);
  }
  for (auto& d : due) SimulatedWait::Post(*d.io, std::move(d.handler), {});
}

std::optional<TimePoint> SimulatedClock::NextDeadline() const {
  std::lock_guard lock(state_->mu);
  if (state_->pending.empty()) return std::nullopt;
  return state_->pending.begin()->first;
}

bool SimulatedClock::Settle(std::chrono::milliseconds limit) const {
  std::vector<boost::asio::io_context*> loops;
  {
    std::lock_guard lock(state_->mu);
    for (const auto& [io, count] : state_->loops) loops.push_back(io);
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (auto* io : loops) {
    // Three hops: the first runs after every handler already queued; the loop polls its sockets
    // before the second (the reactor's turn comes between queued handlers); the third runs after
    // the handlers that poll completed.
    auto done = std::make_shared<std::promise<void>>();
    auto future = done->get_future();
    struct Hop {
      boost::asio::io_context* io;
      std::shared_ptr<std::promise<void>> done;
      int left;
      void operator()() {
        if (left == 0) {
          done->set_value();
          return;
        }
        boost::asio::post(*io, Hop{io, done, left - 1});
      }
    };
    boost::asio::post(*io, Hop{io, done, 2});
    if (future.wait_until(deadline) != std::future_status::ready) return false;
  }
  return true;
}

std::unique_ptr<TimerSource::Wait> SimulatedClock::NewWait(boost::asio::io_context& io) const {
  return std::make_unique<SimulatedWait>(state_, io);
}

}  // namespace bulkhead
