// ThrottleSlots: the throttle slots of the embedded stores (queue_throttle.h), kept beside
// MemoryState's working set: per queue, jid -> (time of its FETCH, wid).
//
// Only reservations made by a throttled FETCH hold a slot, and after a restart every stored
// reservation (its FETCH time taken as its expiry minus its reserve_for; the wid is not stored, so
// it counts toward its queue's total but toward no worker). Expired slots are dropped lazily, by
// the first call that looks at their queue with the throttle's timeout.
//
// Thread-compatible (owned by MemoryState).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "bulkhead/store/queue_throttle.h"

namespace bulkhead {

class ThrottleSlots {
 public:
  // True when `t` has no free slot for `wid` at now (after dropping the slots older than its
  // timeout).
  bool Full(const QueueThrottle& t, const std::string& wid, int64_t now_us);
  // Records the slot of `jid` in `queue`, taken by `wid` at `fetched_us`.
  void Take(const std::string& queue, const std::string& jid, const std::string& wid,
            int64_t fetched_us);
  // Releases the slot of `jid` in `queue`, if it holds one.
  void Release(const std::string& queue, const std::string& jid);
  void Clear() { queues_.clear(); }
  // The wid of the slots restored at start (not a wid a worker can send: it holds a newline).
  static constexpr const char* kRestoredWid = "\n(restored)";
  // The use of `t` at now.
  ThrottleUse Use(const QueueThrottle& t, int64_t now_us);

 private:
  struct Slot {
    int64_t fetched_us;
    std::string wid;
  };
  struct QueueSlots {
    std::unordered_map<std::string, Slot> by_jid;
    std::set<std::pair<int64_t, std::string>> by_time;  // (fetched_us, jid)
    std::unordered_map<std::string, size_t> per_wid;
  };
  // The slots of `queue` once those taken at or before now - timeout are dropped; null when none.
  QueueSlots* Current(const std::string& queue, int64_t now_us, Duration timeout);
  void Drop(std::map<std::string, QueueSlots>::iterator q, const std::string& jid);

  std::map<std::string, QueueSlots> queues_;
};

}  // namespace bulkhead
