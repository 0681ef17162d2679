// StoreCallbacks: how the calls of Store and of its parts (store.h) answer. Store and every part
// interface derive from it, so each names these types the same way (Store::Done, BatchStore::Done).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "bulkhead/store/job_record.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct StoreCallbacks {
  using Done = std::function<void(Status)>;
  using JobCallback = std::function<void(Result<std::optional<JobRecord>>)>;
  using JobsCallback = std::function<void(Result<std::vector<JobRecord>>)>;
  using CountCallback = std::function<void(Result<size_t>)>;
};

}  // namespace bulkhead
