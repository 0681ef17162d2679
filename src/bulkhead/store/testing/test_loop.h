// TestLoop: the event loop of a store test. A store posts its callbacks through poster(); the test
// thread runs them in RunUntil, which fails the test (instead of hanging) when a callback does not
// arrive within 10 s.
// Threading: poster() may be called from any thread (the SQLite writer posts from its own).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include "bulkhead/store/store.h"

namespace bulkhead {

class TestLoop {
 public:
  Store::Poster poster() {
    return [this](std::function<void()> fn) {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(fn));
      cv_.notify_all();
    };
  }
  // Runs posted callbacks until `done()` holds; fails after 10 s.
  void RunUntil(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      std::vector<std::function<void()>> ready;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_until(lock, deadline, [&] { return !queue_.empty(); });
        ready.swap(queue_);
      }
      for (auto& fn : ready) fn();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "store callback never arrived";
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> queue_;
};

}  // namespace bulkhead
