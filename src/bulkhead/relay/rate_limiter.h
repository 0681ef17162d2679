// RateLimiter: token buckets by key (an app, an app's device token), for the relay's 429s.
// Each key's bucket holds up to `burst` and refills at `rate` per `per`; a message takes one.
// Kept in the node's memory: a limit protects this node's intake, and a restart forgets it
// (nothing that must survive). At most `max_keys` buckets: past it, full (idle) buckets are
// dropped, then the oldest half. Event loop thread only.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>

#include "bulkhead/util/clock.h"

namespace bulkhead {

class RateLimiter {
 public:
  // `rate` 0: no limit.
  RateLimiter(double rate, Duration per, double burst, size_t max_keys = 100'000)
      : rate_(rate), per_(per), burst_(std::max(1.0, burst)), max_keys_(max_keys) {}

  // Takes one from `key`'s bucket at `now`; nullopt when it had one, else how long until it will.
  std::optional<Duration> Take(const std::string& key, TimePoint now);

  size_t keys() const { return buckets_.size(); }

 private:
  struct Bucket {
    double level;
    TimePoint at;
  };
  double Refilled(const Bucket& b, TimePoint now) const;
  void Trim(TimePoint now);

  double rate_;
  Duration per_;
  double burst_;
  size_t max_keys_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace bulkhead
