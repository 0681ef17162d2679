#include "bulkhead/util/log_limiter.h"

namespace bulkhead {

LogLimiter::LogLimiter(const Clock& clock, Duration interval, size_t max_keys)
    : clock_(clock), interval_(interval), max_keys_(max_keys < 1 ? 1 : max_keys) {}

std::optional<int64_t> LogLimiter::Admit(std::string_view key) {
  TimePoint now = clock_.Now();
  auto it = entries_.find(std::string(key));
  if (it == entries_.end()) {
    if (entries_.size() >= max_keys_) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    order_.emplace_back(key);
    entries_.emplace(std::string(key), Entry{now, 0, std::prev(order_.end())});
    return 0;
  }
  Entry& e = it->second;
  if (now - e.last_logged < interval_) {
    ++e.dropped;
    return std::nullopt;
  }
  int64_t dropped = e.dropped;
  e.dropped = 0;
  e.last_logged = now;
  order_.splice(order_.end(), order_, e.order);  // most recently logged last
  return dropped;
}

std::string LogLimiter::SuppressedNote(int64_t dropped) {
  if (dropped <= 0) return "";
  return " (" + std::to_string(dropped) + " similar line" + (dropped == 1 ? "" : "s") +
         " suppressed)";
}

}  // namespace bulkhead
