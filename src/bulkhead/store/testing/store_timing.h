// Test-only: the two timings a suite runs its cases over. kInline: a store answering inside each
// call; kDeferred: the same store behind store/testing/deferred_store.h, whose answers always
// arrive on a later turn of the event loop (the store contract allows both, store/store.h).
// Instantiate a value-parametrized suite with kBothTimings and StoreTimingName: each case runs as
// ".../Inline" and ".../Deferred".
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace bulkhead {

enum class StoreTiming { kInline, kDeferred };

inline const auto kBothTimings = ::testing::Values(StoreTiming::kInline, StoreTiming::kDeferred);

inline std::string StoreTimingName(const ::testing::TestParamInfo<StoreTiming>& info) {
  return info.param == StoreTiming::kInline ? "Inline" : "Deferred";
}

}  // namespace bulkhead
