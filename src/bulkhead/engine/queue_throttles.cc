#include "bulkhead/engine/queue_throttles.h"

#include <algorithm>
#include <set>

namespace bulkhead {

QueueThrottles::QueueThrottles(const ThrottleConfigs& configs) {
  for (const auto& [queue, c] : configs) {
    all_.push_back(QueueThrottle{.queue = queue,
                                 .limit = c.limit,
                                 .per_worker = c.per_worker,
                                 .timeout = std::chrono::seconds(c.timeout_seconds)});
  }
}

const QueueThrottle* QueueThrottles::Find(const std::string& queue) const {
  auto it =
      std::lower_bound(all_.begin(), all_.end(), queue,
                       [](const QueueThrottle& t, const std::string& q) { return t.queue < q; });
  return it != all_.end() && it->queue == queue ? &*it : nullptr;
}

std::vector<QueueThrottle> QueueThrottles::Of(const std::vector<std::string>& queues) const {
  std::vector<QueueThrottle> out;
  if (all_.empty()) return out;
  for (const std::string& q : queues) {
    const QueueThrottle* t = Find(q);
    if (!t) continue;
    bool listed =
        std::any_of(out.begin(), out.end(), [&](const QueueThrottle& o) { return o.queue == q; });
    if (!listed) out.push_back(*t);
  }
  return out;
}

void QueueThrottles::NoteSlotTaken(const std::string& queue, TimePoint now) {
  if (const QueueThrottle* t = Find(queue)) expiries_.emplace(now + t->timeout, queue);
}

std::optional<TimePoint> QueueThrottles::NextExpiry() const {
  if (expiries_.empty()) return std::nullopt;
  return expiries_.begin()->first;
}

std::vector<std::string> QueueThrottles::PopExpired(TimePoint now) {
  std::set<std::string> queues;
  while (!expiries_.empty() && expiries_.begin()->first <= now) {
    queues.insert(expiries_.begin()->second);
    expiries_.erase(expiries_.begin());
  }
  return {queues.begin(), queues.end()};
}

}  // namespace bulkhead
