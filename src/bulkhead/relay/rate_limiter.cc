#include "bulkhead/relay/rate_limiter.h"

#include <algorithm>
#include <vector>

namespace bulkhead {

double RateLimiter::Refilled(const Bucket& b, TimePoint now) const {
  double elapsed = std::chrono::duration<double>(now - b.at) / std::chrono::duration<double>(per_);
  return std::min(burst_, b.level + std::max(0.0, elapsed) * rate_);
}

std::optional<Duration> RateLimiter::Take(const std::string& key, TimePoint now) {
  if (rate_ <= 0) return std::nullopt;
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) Trim(now);
    it = buckets_.emplace(key, Bucket{burst_, now}).first;
  }
  Bucket& b = it->second;
  b.level = Refilled(b, now);
  b.at = now;
  if (b.level >= 1.0) {
    b.level -= 1.0;
    return std::nullopt;
  }
  double missing = 1.0 - b.level;
  return std::chrono::duration_cast<Duration>(per_ * (missing / rate_));
}

void RateLimiter::Trim(TimePoint now) {
  std::erase_if(buckets_, [&](const auto& kv) { return Refilled(kv.second, now) >= burst_; });
  if (buckets_.size() < max_keys_) return;
  std::vector<std::pair<TimePoint, std::string>> by_age;
  by_age.reserve(buckets_.size());
  for (const auto& [k, b] : buckets_) by_age.emplace_back(b.at, k);
  std::nth_element(by_age.begin(), by_age.begin() + by_age.size() / 2, by_age.end());
  for (size_t i = 0; i < by_age.size() / 2; ++i) buckets_.erase(by_age[i].second);
}

}  // namespace bulkhead
