// RequestBuilder with real worker threads and an io_context run by the test: results come back on
// the loop thread, a build that blocks holds up neither the loop nor the other workers, the job is
// the builder's own copy, and destruction with builds queued is safe. Every wait is bounded.

#include "bulkhead/dispatch/request_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace bulkhead {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Runs `io` until `done()` or `limit` passes; false on timeout.
bool RunUntil(boost::asio::io_context& io, const std::function<bool()>& done,
              milliseconds limit = milliseconds(10'000)) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    io.restart();
    io.run_for(milliseconds(5));
  }
  return true;
}

// A gate a build waits at until the test opens it (bounded, so a broken test cannot hang).
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, seconds(10), [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

DeliveryJob JobTo(const std::string& url) {
  DeliveryJob job;
  job.jid = "j-" + url;
  job.url = url;
  return job;
}

Result<HttpRequest> RequestFor(const DeliveryJob& job) {
  HttpRequest r;
  r.method = "POST";
  r.url = job.url;
  return r;
}

TEST(RequestBuilderTest, ResultsRunOnTheLoopThreadNeverInsideBuild) {
  boost::asio::io_context io;
  std::atomic<std::thread::id> built_on{};
  RequestBuilder builder(io, 2, [&](const DeliveryJob& job) {
    built_on = std::this_thread::get_id();
    return RequestFor(job);
  });
  std::vector<std::string> urls;
  std::thread::id done_on;
  builder.Build(JobTo("https://a.example/inbox"), [&](Result<HttpRequest> r) {
    ASSERT_TRUE(r.ok());
    urls.push_back(r->url);
    done_on = std::this_thread::get_id();
  });
  EXPECT_TRUE(urls.empty()) << "done ran inside Build";
  EXPECT_EQ(builder.pending(), 1u);
  ASSERT_TRUE(RunUntil(io, [&] { return !urls.empty(); })) << "no result within 10 s";
  EXPECT_EQ(urls, std::vector<std::string>{"https://a.example/inbox"});
  EXPECT_EQ(done_on, std::this_thread::get_id()) << "done must run on the loop's thread";
  EXPECT_NE(built_on.load(), std::this_thread::get_id()) << "the build ran on the loop";
  EXPECT_EQ(builder.pending(), 0u);
}

TEST(RequestBuilderTest, ASlowBuildHoldsUpNeitherTheLoopNorOtherBuilds) {
  boost::asio::io_context io;
  Gate gate;
  RequestBuilder builder(io, 2, [&](const DeliveryJob& job) {
    if (job.url == "https://slow.example/") {
      if (!gate.Wait()) return Result<HttpRequest>(Status::Internal("gate never opened"));
    }
    return RequestFor(job);
  });
  std::vector<std::string> order;
  auto record = [&](Result<HttpRequest> r) { order.push_back(r.ok() ? r->url : "error"); };
  builder.Build(JobTo("https://slow.example/"), record);
  builder.Build(JobTo("https://fast.example/"), record);
  // The loop keeps turning (a timer fires) and the fast build comes back while the slow one waits.
  bool timer_fired = false;
  boost::asio::steady_timer timer(io, milliseconds(1));
  timer.async_wait([&](const boost::system::error_code&) { timer_fired = true; });
  ASSERT_TRUE(RunUntil(io, [&] { return timer_fired && order.size() == 1; }))
      << "the fast build or the loop's timer waited for the slow build";
  EXPECT_EQ(order[0], "https://fast.example/");
  gate.Open();
  ASSERT_TRUE(RunUntil(io, [&] { return order.size() == 2; }));
  EXPECT_EQ(order[1], "https://slow.example/");
}

TEST(RequestBuilderTest, BuildsItsOwnCopyOfTheJob) {
  boost::asio::io_context io;
  Gate gate;
  RequestBuilder builder(io, 1, [&](const DeliveryJob& job) {
    gate.Wait();
    return RequestFor(job);
  });
  std::string url;
  {
    DeliveryJob job = JobTo("https://copy.example/inbox");
    builder.Build(job, [&](Result<HttpRequest> r) { url = r.ok() ? r->url : "error"; });
    job.url = "https://changed.example/";
  }  // the caller's job is gone before the build runs
  gate.Open();
  ASSERT_TRUE(RunUntil(io, [&] { return !url.empty(); }));
  EXPECT_EQ(url, "https://copy.example/inbox");
}

TEST(RequestBuilderTest, ErrorsComeBackAsResults) {
  boost::asio::io_context io;
  RequestBuilder builder(io, 1, [](const DeliveryJob&) -> Result<HttpRequest> {
    return Status::InvalidArgument("no signing key for the job's key_id");
  });
  std::optional<Status> got;
  builder.Build(JobTo("https://a.example/"), [&](Result<HttpRequest> r) { got = r.status(); });
  ASSERT_TRUE(RunUntil(io, [&] { return got.has_value(); }));
  EXPECT_EQ(got->code(), StatusCode::kInvalidArgument);
}

TEST(RequestBuilderTest, DestroyedWithBuildsQueuedRunsNoneOfTheirCallbacksUnsafely) {
  boost::asio::io_context io;
  Gate gate;
  std::atomic<int> started{0};
  int done = 0;
  {
    RequestBuilder builder(io, 1, [&](const DeliveryJob& job) {
      ++started;
      gate.Wait();
      return RequestFor(job);
    });
    for (int i = 0; i < 50; ++i) {
      builder.Build(JobTo("https://q.example/" + std::to_string(i)),
                    [&](Result<HttpRequest>) { ++done; });
    }
    auto until = std::chrono::steady_clock::now() + seconds(10);
    while (started.load() == 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    ASSERT_EQ(started.load(), 1);
    gate.Open();  // the running build finishes; the destructor drops the queued ones
  }
  EXPECT_LE(started.load(), 50);
  io.restart();
  io.poll();  // results posted before destruction still run, safely
  EXPECT_LE(done, started.load());
}

TEST(RequestBuilderTest, ThreadCountDefaultsToTheCoresWeMayRunOn) {
  EXPECT_EQ(RequestBuilderThreads(3), 3u);
  size_t cores = RequestBuilderThreads(0);
  EXPECT_GE(cores, 1u);
  EXPECT_LE(cores, std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace bulkhead
