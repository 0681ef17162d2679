// WriterPostGate: a Store::Poster for a TestLoop that holds back what other threads (the SQLite
// writer) post until Release(), so that a test decides when the writer's answers reach the loop.
// What the loop's own thread posts (the change log's end-of-turn flush) goes straight to it.
// Threading: poster() may be called from any thread; the rest from the loop's thread (the test's).
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {

class WriterPostGate {
 public:
  explicit WriterPostGate(TestLoop& loop) : loop_(loop) {}

  Store::Poster poster() {
    return [this](std::function<void()> fn) {
      if (std::this_thread::get_id() == loop_thread_) {
        boost::asio::post(loop_.io(), std::move(fn));
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      held_.push_back(std::move(fn));
    };
  }
  // Runs what the loop has ready until the writer posted something; fails after 10 s.
  void WaitForWriter() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      RunReady();
      std::lock_guard<std::mutex> lock(mu_);
      if (!held_.empty()) return;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the writer posted nothing";
    }
  }
  // Runs what the loop has ready now (the flush of this turn), without waiting.
  void RunReady() {
    loop_.io().poll();
    loop_.io().restart();
  }
  // Hands what the writer posted so far to the loop; later posts are held again.
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& fn : held_) boost::asio::post(loop_.io(), std::move(fn));
    held_.clear();
  }

 private:
  TestLoop& loop_;
  const std::thread::id loop_thread_ = std::this_thread::get_id();
  std::mutex mu_;
  std::vector<std::function<void()>> held_;
};

}  // namespace bulkhead
