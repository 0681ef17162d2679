// QueueThrottles: the engine's side of queue throttling (docs/throttles.md): the configured
// throttles as the store applies them (store/queue_throttle.h), and when this node's own slots
// expire, so that FETCHes waiting only for a slot are woken then.
//
// Waking: a slot released through this node (ACK, FAIL, reaper, a FETCH that is gone) wakes this
// node's waiting FETCHes of its queue at once (the engine calls WakeWaiters); one released through
// another node sharing a Redis store arrives through the store's wake handler; a slot this node
// took wakes them at its timeout (NoteSlotTaken / PopExpired); a slot another node took and that
// times out is seen by the next probe, at the latest when the waiting FETCH's block time
// (fetch_block_ms) ends and the worker FETCHes again.
//
// Thread-compatible (owned by the engine, on the event loop).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/config/throttle_config.h"
#include "bulkhead/store/queue_throttle.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class QueueThrottles {
 public:
  explicit QueueThrottles(const ThrottleConfigs& configs);

  bool empty() const { return all_.empty(); }
  // Every throttle, ordered by queue.
  const std::vector<QueueThrottle>& all() const { return all_; }
  // The throttle of `queue`, or null.
  const QueueThrottle* Find(const std::string& queue) const;
  // The throttles of the listed queues (each once), in the order listed.
  std::vector<QueueThrottle> Of(const std::vector<std::string>& queues) const;

  // A throttled FETCH through this node took a slot of `queue` at `now`.
  void NoteSlotTaken(const std::string& queue, TimePoint now);
  // When the earliest slot noted expires; nullopt when none is noted.
  std::optional<TimePoint> NextExpiry() const;
  // The queues whose noted slots expired at or before `now` (each once); forgets those slots.
  std::vector<std::string> PopExpired(TimePoint now);

 private:
  std::vector<QueueThrottle> all_;
  std::multimap<TimePoint, std::string> expiries_;  // noted slot -> its queue
};

}  // namespace bulkhead
