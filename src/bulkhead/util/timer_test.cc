// Timer on both kinds of clock: a SimulatedClock's timers fire when the clock is moved, any other
// clock's wait on the monotonic clock.
#include "bulkhead/util/timer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <thread>
#include <vector>

#include "bulkhead/util/simulated_clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using boost::system::error_code;

class SimulatedTimerTest : public ::testing::Test {
 protected:
  void RunReady() {
    io_.restart();
    io_.poll();
  }
  // A handler that records how it ended: "fired" or "aborted".
  TimerHandler Record(std::string name) {
    return [this, name](error_code ec) { events_.push_back(name + (ec ? ":aborted" : ":fired")); };
  }

  SimulatedClock clock_;
  boost::asio::io_context io_;
  std::vector<std::string> events_;
};

TEST_F(SimulatedTimerTest, FiresOnlyWhenTheClockPassesTheDeadline) {
  Timer t(io_, clock_);
  t.ExpiresAfter(2s);
  t.AsyncWait(Record("t"));
  EXPECT_EQ(clock_.NextDeadline(), clock_.Now() + 2s);
  clock_.Advance(1999ms);
  RunReady();
  EXPECT_TRUE(events_.empty());
  clock_.Advance(1ms);
  EXPECT_TRUE(events_.empty()) << "handlers run on the loop, not in Advance";
  RunReady();
  EXPECT_EQ(events_, std::vector<std::string>{"t:fired"});
  EXPECT_EQ(clock_.NextDeadline(), std::nullopt);
}

TEST_F(SimulatedTimerTest, DueTimersFireInDeadlineOrder) {
  Timer late(io_, clock_), early(io_, clock_);
  late.ExpiresAfter(3s);
  late.AsyncWait(Record("late"));
  early.ExpiresAfter(1s);
  early.AsyncWait(Record("early"));
  clock_.Advance(10s);
  RunReady();
  EXPECT_EQ(events_, (std::vector<std::string>{"early:fired", "late:fired"}));
}

TEST_F(SimulatedTimerTest, CancelReplaceAndDestroyAbortTheWait) {
  Timer a(io_, clock_);
  a.ExpiresAfter(1s);
  a.AsyncWait(Record("cancelled"));
  a.Cancel();
  a.ExpiresAfter(1s);
  a.AsyncWait(Record("replaced"));
  a.ExpiresAfter(5s);
  a.AsyncWait(Record("a"));
  {
    Timer b(io_, clock_);
    b.ExpiresAfter(1s);
    b.AsyncWait(Record("destroyed"));
  }
  RunReady();
  EXPECT_EQ(events_, (std::vector<std::string>{"cancelled:aborted", "replaced:aborted",
                                               "destroyed:aborted"}));
  clock_.Advance(5s);
  RunReady();
  EXPECT_EQ(events_.back(), "a:fired");
}

TEST_F(SimulatedTimerTest, AWaitOnAPassedDeadlineCompletesAtOnce) {
  Timer t(io_, clock_);
  t.ExpiresAfter(0s);
  t.AsyncWait(Record("now"));
  RunReady();
  EXPECT_EQ(events_, std::vector<std::string>{"now:fired"});
}

TEST_F(SimulatedTimerTest, AHandlerMayRearmItsTimer) {
  Timer t(io_, clock_);
  int ticks = 0;
  std::function<void()> arm = [&] {
    t.ExpiresAfter(1s);
    t.AsyncWait([&](error_code ec) {
      if (ec) return;
      ++ticks;
      arm();
    });
  };
  arm();
  clock_.Advance(10s);
  RunReady();
  EXPECT_EQ(ticks, 1) << "one Advance fires a periodic timer once";
  EXPECT_EQ(clock_.NextDeadline(), clock_.Now() + 1s);
  clock_.Advance(1s);
  RunReady();
  EXPECT_EQ(ticks, 2);
  t.Cancel();
}

TEST_F(SimulatedTimerTest, SettleWaitsForALoopOnAnotherThread) {
  auto work = boost::asio::make_work_guard(io_);
  std::thread loop([&] { io_.run(); });
  std::atomic<int> fired{0};
  {
    Timer t(io_, clock_);
    boost::asio::post(io_, [&] {
      t.ExpiresAfter(1s);
      t.AsyncWait([&](error_code ec) {
        if (!ec) ++fired;
      });
    });
    ASSERT_TRUE(clock_.Settle());
    EXPECT_EQ(clock_.NextDeadline(), clock_.Now() + 1s) << "armed by the time Settle returned";
    clock_.Advance(1s);
    ASSERT_TRUE(clock_.Settle());
    EXPECT_EQ(fired.load(), 1);
  }
  work.reset();
  loop.join();
}

TEST(SteadyTimerTest, AnyOtherClocksTimersWaitOnTheMonotonicClock) {
  boost::asio::io_context io;
  ManualClock frozen;  // never moves: the wait must not depend on it
  Timer t(io, frozen);
  bool fired = false;
  t.ExpiresAfter(1ms);
  t.AsyncWait([&](error_code ec) { fired = !ec; });
  io.run();
  EXPECT_TRUE(fired);
  Timer cancelled(io, SystemClock::Instance());
  error_code got;
  cancelled.ExpiresAfter(1h);
  cancelled.AsyncWait([&](error_code ec) { got = ec; });
  cancelled.Cancel();
  io.restart();
  io.run();
  EXPECT_EQ(got, boost::asio::error::operation_aborted);
}

}  // namespace
}  // namespace bulkhead
