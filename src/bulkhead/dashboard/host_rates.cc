#include "bulkhead/dashboard/host_rates.h"

#include <set>

namespace bulkhead::dashboard {

void HostRates::Add(TimePoint at, const std::vector<HostView>& hosts) {
  std::set<std::string> seen;
  for (const HostView& h : hosts) {
    seen.insert(h.host);
    auto& q = samples_[h.host];
    // A counter that went down (the host's compartment was evicted and made anew) restarts it.
    if (!q.empty() && (h.successes < q.back().successes || h.failures < q.back().failures)) {
      q.clear();
    }
    q.push_back({at, h.successes, h.failures});
    while (q.size() > 2 && at - q[1].at >= kWindow) q.pop_front();
  }
  for (auto it = samples_.begin(); it != samples_.end();) {
    it = seen.contains(it->first) ? std::next(it) : samples_.erase(it);
  }
}

std::optional<PerMinute> HostRates::Of(const std::string& host) const {
  auto it = samples_.find(host);
  if (it == samples_.end() || it->second.size() < 2) return std::nullopt;
  const Sample& a = it->second.front();
  const Sample& b = it->second.back();
  double minutes = std::chrono::duration<double>(b.at - a.at).count() / 60.0;
  if (minutes <= 0) return std::nullopt;
  return PerMinute{static_cast<double>(b.successes - a.successes) / minutes,
                   static_cast<double>(b.failures - a.failures) / minutes};
}

}  // namespace bulkhead::dashboard
