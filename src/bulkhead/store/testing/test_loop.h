// TestLoop: the event loop of a store test, an io_context. A store posts its callbacks through
// poster(), a networked store's connections run on io(); the test thread runs both in RunUntil,
// which fails the test (instead of hanging) when a callback does not arrive within 10 s.
// Threading: poster() may be called from any thread (the SQLite writer posts from its own).
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>

#include "bulkhead/redis/testing/run_until.h"
#include "bulkhead/store/store.h"

namespace bulkhead {

class TestLoop {
 public:
  TestLoop() : work_(boost::asio::make_work_guard(io_)) {}

  boost::asio::io_context& io() { return io_; }
  Store::Poster poster() {
    return [this](std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); };
  }
  // Runs the loop until `done()` holds; fails after `bound`.
  void RunUntil(const std::function<bool()>& done,
                std::chrono::milliseconds bound = std::chrono::seconds(10)) {
    ASSERT_TRUE(bulkhead::RunUntil(io_, done, "store callback never arrived", bound));
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
};

}  // namespace bulkhead
