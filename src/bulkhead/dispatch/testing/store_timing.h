// Test-only: the two timings every dispatch suite runs over, and the loop helpers that let a test
// read what the code under test did whichever way the store answers.
//
// Suites are value-parametrized on StoreTiming and instantiated with kBothTimings and
// StoreTimingName, so each test runs as ".../Inline" (the memory store answering inside each
// call) and ".../Deferred" (the same store behind store/testing/deferred_store.h, whose answers
// are posted onto the test's io_context and so always arrive after the call returned).
//
// The helpers never sleep: they run the io_context's ready handlers, and fail the test with a
// message naming what was awaited when the loop goes idle first or runs more than kMaxHandlers.
// They are called from the test body, never from inside a handler.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/store/testing/store_timing.h"

namespace bulkhead {

// Handlers one helper call may run before it gives up (a loop that never goes idle).
inline constexpr int kMaxHandlers = 1'000'000;

// A fresh memory store answering inline, or the same kind of store wrapped in a DeferredStore
// whose answers are posted onto `io` (which must outlive the store).
inline std::unique_ptr<Store> OpenTimedStore(StoreTiming timing, boost::asio::io_context& io) {
  auto inner = OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); });
  EXPECT_TRUE(inner.ok()) << inner.status().ToString();
  if (timing == StoreTiming::kInline) return std::move(*inner);
  return std::make_unique<DeferredStore>(
      std::move(*inner), [&io](std::function<void()> f) { boost::asio::post(io, std::move(f)); });
}

// Runs `io`'s handlers until `done()` holds. False (and a test failure naming `what`) when the
// loop goes idle first or after kMaxHandlers handlers.
inline bool RunHandlersUntil(boost::asio::io_context& io, const std::function<bool()>& done,
                             const std::string& what) {
  for (int n = 0; !done(); ++n) {
    if (n == kMaxHandlers) {
      ADD_FAILURE() << what << ": still not done after " << kMaxHandlers << " handlers";
      return false;
    }
    if (io.stopped()) io.restart();
    if (io.poll_one() == 0) {
      ADD_FAILURE() << what << ": the event loop went idle first";
      return false;
    }
  }
  return true;
}

// Runs `io`'s ready handlers (and those they post) until none is ready, so that everything the
// last step set off has happened (a deferred store's answers included). Timers not yet due stay
// pending. Fails the test after kMaxHandlers handlers.
inline void Settle(boost::asio::io_context& io) {
  for (int n = 0; n < kMaxHandlers; ++n) {
    if (io.stopped()) io.restart();
    if (io.poll_one() == 0) return;
  }
  ADD_FAILURE() << "the event loop did not settle after " << kMaxHandlers << " handlers";
}

// Calls `call` with a callback and runs `io` until that callback has run; returns its argument,
// or an Internal error naming `what` (and a test failure) when it never runs. T is Status or a
// Result<...>.
template <typename T>
T Await(boost::asio::io_context& io, const std::string& what,
        const std::function<void(std::function<void(T)>)>& call) {
  auto answer = std::make_shared<std::optional<T>>();
  call([answer](T value) { answer->emplace(std::move(value)); });
  if (!RunHandlersUntil(
          io, [&answer] { return answer->has_value(); }, "waiting for the answer to " + what)) {
    return T(Status::Internal("no answer to " + what));
  }
  return std::move(**answer);
}

// Every job of `queue`, taken (reserved) from `store` oldest first, each fetch awaited on `io`.
// For tests that read what code under test pushed; a fetch error fails the test.
inline std::vector<JobRecord> TakeAllOn(boost::asio::io_context& io, Store& store,
                                        const std::string& queue, TimePoint now) {
  std::vector<JobRecord> out;
  for (;;) {
    auto r = Await<Result<std::optional<JobRecord>>>(
        io, "a fetch from " + queue, [&](std::function<void(Result<std::optional<JobRecord>>)> cb) {
          store.Fetch({queue}, now, std::move(cb));
        });
    if (!r.ok()) {
      ADD_FAILURE() << "fetch from " << queue << ": " << r.status().message();
      return out;
    }
    if (!r->has_value()) return out;
    out.push_back(std::move(**r));
  }
}

// Every job of `set` (up to 1,000,000), read from `store` with the answer awaited on `io`.
inline std::vector<JobRecord> ListOn(boost::asio::io_context& io, Store& store, JobState set) {
  auto r = Await<Result<std::vector<JobRecord>>>(
      io, "a list of jobs", [&](std::function<void(Result<std::vector<JobRecord>>)> cb) {
        store.List(set, 0, 1'000'000, std::move(cb));
      });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : std::vector<JobRecord>{};
}

// Every saved host state, read from `store` with the answer awaited on `io`.
inline std::vector<HostStateRecord> HostStatesOn(boost::asio::io_context& io, Store& store) {
  auto r = Await<Result<std::vector<HostStateRecord>>>(
      io, "a list of host states",
      [&](std::function<void(Result<std::vector<HostStateRecord>>)> cb) {
        store.host_states().List(std::move(cb));
      });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : std::vector<HostStateRecord>{};
}

}  // namespace bulkhead
