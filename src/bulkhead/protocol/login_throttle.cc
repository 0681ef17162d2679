#include "bulkhead/protocol/login_throttle.h"

#include <algorithm>

namespace bulkhead {

LoginThrottle::LoginThrottle(const Clock& clock, Options options)
    : clock_(clock), options_(options) {}

Duration LoginThrottle::Wait(const std::string& peer) const {
  auto it = peers_.find(peer);
  if (it == peers_.end()) return Duration::zero();
  TimePoint now = clock_.Now();
  if (now - it->second.last_failure >= options_.forget_after) return Duration::zero();
  return std::max(Duration::zero(), it->second.next_check - now);
}

int LoginThrottle::RecordFailure(const std::string& peer) {
  TimePoint now = clock_.Now();
  auto it = peers_.find(peer);
  if (it == peers_.end()) {
    EvictIfFull();
    it = peers_.emplace(peer, Peer{}).first;
  } else if (now - it->second.last_failure >= options_.forget_after) {
    it->second = Peer{};
  }
  Peer& p = it->second;
  ++p.failures;
  p.last_failure = now;
  Duration delay = Duration::zero();
  if (p.failures >= 2 && options_.base_delay > Duration::zero()) {
    // base * 2^(failures - 2), computed without overflow.
    delay = options_.base_delay;
    for (int i = 2; i < p.failures && delay < options_.max_delay; ++i) delay *= 2;
    delay = std::min(delay, options_.max_delay);
  }
  p.next_check = now + delay;
  return p.failures;
}

void LoginThrottle::RecordSuccess(const std::string& peer) { peers_.erase(peer); }

void LoginThrottle::EvictIfFull() {
  if (peers_.size() < std::max<size_t>(options_.max_peers, 1)) return;
  TimePoint now = clock_.Now();
  std::erase_if(peers_, [&](const auto& kv) {
    return now - kv.second.last_failure >= options_.forget_after;
  });
  if (peers_.size() < options_.max_peers) return;
  auto oldest = std::min_element(peers_.begin(), peers_.end(), [](const auto& a, const auto& b) {
    return a.second.last_failure < b.second.last_failure;
  });
  peers_.erase(oldest);
}

}  // namespace bulkhead
