// TakeAll: every job of a queue, taken (reserved) from a store that answers inline (the memory
// store with an inline poster), oldest first. For tests that read what code under test pushed.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "bulkhead/store/store.h"

namespace bulkhead {

inline std::vector<JobRecord> TakeAll(Store& store, const std::string& queue, TimePoint now) {
  std::vector<JobRecord> out;
  for (;;) {
    bool answered = false;
    std::optional<JobRecord> job;
    store.Fetch({queue}, now, [&](Result<std::optional<JobRecord>> r) {
      answered = true;
      if (r.ok()) {
        job = std::move(*r);
      } else {
        ADD_FAILURE() << "fetch from " << queue << ": " << r.status().message();
      }
    });
    if (!answered) ADD_FAILURE() << "TakeAll needs a store that answers inline";
    if (!job) return out;
    out.push_back(std::move(*job));
  }
}

}  // namespace bulkhead
