// Queue throttling (docs/throttles.md): what the store needs to apply a throttle at
// FETCH, and what it reports of one.
//
// A slot of queue Q is a reservation of a job of Q made by a throttled FETCH less than `timeout`
// ago; for a per-worker throttle, the slot belongs to the wid that fetched it. A slot is released
// when its job leaves the working set (ACK, FAIL, Remove, a reservation given back or requeued)
// and `timeout` after its FETCH regardless (the job may still be reserved then).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bulkhead/util/clock.h"

namespace bulkhead {

struct QueueThrottle {
  std::string queue;
  // At most `limit` slots held at once: in all, or per wid when `per_worker`.
  int limit = 0;
  bool per_worker = false;
  Duration timeout = std::chrono::seconds(60);
};

// What a throttled FETCH passes to the store: the throttles of the queues it lists (others are not
// throttled) and the fetching worker's wid (may be empty: then per-worker throttles count it as
// the worker "").
struct ThrottledFetch {
  std::vector<QueueThrottle> throttles;
  std::string wid;
};

// One throttle's use at a moment.
struct ThrottleUse {
  std::string queue;
  // Slots held in all.
  size_t in_use = 0;
  // Per-worker throttles: the most slots one wid holds (0 otherwise).
  size_t max_per_worker = 0;

  bool operator==(const ThrottleUse&) const = default;
};

}  // namespace bulkhead
