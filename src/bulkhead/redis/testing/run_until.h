// RunUntil (tests only): runs an io_context until a condition holds, bounded, so a callback that
// never arrives fails the test with a message instead of hanging it.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <string>

namespace bulkhead {

inline ::testing::AssertionResult RunUntil(
    boost::asio::io_context& io, const std::function<bool()>& done, const std::string& what,
    std::chrono::milliseconds bound = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return ::testing::AssertionFailure() << what << ": not done after " << bound.count() << " ms";
    }
    io.restart();
    io.run_one_until(deadline);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace bulkhead
