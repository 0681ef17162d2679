#include "bulkhead/store/throttle_slots.h"

#include <algorithm>

namespace bulkhead {

ThrottleSlots::QueueSlots* ThrottleSlots::Current(const std::string& queue, int64_t now_us,
                                                  Duration timeout) {
  auto q = queues_.find(queue);
  if (q == queues_.end()) return nullptr;
  int64_t cutoff = now_us - std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  while (!q->second.by_time.empty() && q->second.by_time.begin()->first <= cutoff) {
    std::string jid = q->second.by_time.begin()->second;
    Drop(q, jid);
    if (q->second.by_jid.empty()) {
      queues_.erase(q);
      return nullptr;
    }
  }
  return &q->second;
}

bool ThrottleSlots::Full(const QueueThrottle& t, const std::string& wid, int64_t now_us) {
  const QueueSlots* q = Current(t.queue, now_us, t.timeout);
  if (!q) return false;
  size_t held = q->by_jid.size();
  if (t.per_worker) {
    auto it = q->per_wid.find(wid);
    held = it == q->per_wid.end() ? 0 : it->second;
  }
  return held >= static_cast<size_t>(std::max(t.limit, 0));
}

void ThrottleSlots::Take(const std::string& queue, const std::string& jid, const std::string& wid,
                         int64_t fetched_us) {
  Release(queue, jid);
  QueueSlots& q = queues_[queue];
  q.by_jid.emplace(jid, Slot{fetched_us, wid});
  q.by_time.emplace(fetched_us, jid);
  ++q.per_wid[wid];
}

void ThrottleSlots::Release(const std::string& queue, const std::string& jid) {
  auto q = queues_.find(queue);
  if (q == queues_.end()) return;
  Drop(q, jid);
  if (q->second.by_jid.empty()) queues_.erase(q);
}

void ThrottleSlots::Drop(std::map<std::string, QueueSlots>::iterator q, const std::string& jid) {
  auto slot = q->second.by_jid.find(jid);
  if (slot == q->second.by_jid.end()) return;
  q->second.by_time.erase({slot->second.fetched_us, jid});
  auto w = q->second.per_wid.find(slot->second.wid);
  if (--w->second == 0) q->second.per_wid.erase(w);
  q->second.by_jid.erase(slot);
}

ThrottleUse ThrottleSlots::Use(const QueueThrottle& t, int64_t now_us) {
  ThrottleUse use{.queue = t.queue};
  const QueueSlots* q = Current(t.queue, now_us, t.timeout);
  if (!q) return use;
  use.in_use = q->by_jid.size();
  if (t.per_worker) {
    for (const auto& [wid, n] : q->per_wid) {
      // Slots restored at start have no wid: they count toward the total only.
      if (wid != kRestoredWid) use.max_per_worker = std::max(use.max_per_worker, n);
    }
  }
  return use;
}

}  // namespace bulkhead
