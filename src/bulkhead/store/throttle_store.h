// ThrottleStore: the store's part for queue throttling (Store::throttles(); what a throttle is:
// queue_throttle.h). Store's contract (store.h) holds for every call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/store/queue_throttle.h"
#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class ThrottleStore : public StoreCallbacks {
 public:
  virtual ~ThrottleStore() = default;

  // Fetch, where a listed queue with a throttle in `throttled` whose slots are all held (in all,
  // or by throttled.wid for a per-worker throttle) counts as empty, and the job handed out of a
  // throttled queue takes a slot, in the same atomic step (so the limit holds across the nodes
  // sharing the store). A slot is released when its job leaves the working set and `timeout`
  // after the FETCH; the slots survive a restart (see each implementation). A non-empty
  // throttled.wid is recorded as the holder of the job reserved, in the same step (as FetchFor).
  virtual void Fetch(const std::vector<std::string>& queues, const ThrottledFetch& throttled,
                     TimePoint now, JobCallback cb) = 0;
  using ThrottleUsesCallback = std::function<void(Result<std::vector<ThrottleUse>>)>;
  // The use of each throttle at `now`, in the order given. A read.
  virtual void Uses(const std::vector<QueueThrottle>& throttles, TimePoint now,
                    ThrottleUsesCallback cb) = 0;
};

}  // namespace bulkhead
