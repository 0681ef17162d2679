// HostRates: each delivery host's successes and failures per minute, from the counters since start
// that HostView carries, sampled by the dashboard's sampler (one Add a second). A host's rate is
// the change over the samples of the last minute, scaled to 60 s; a host seen for less than two
// samples has none yet. Hosts gone from the snapshot are forgotten. Thread-compatible.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/util/clock.h"
#include "bulkhead/view/host_view.h"

namespace bulkhead::dashboard {

struct PerMinute {
  double successes = 0;
  double failures = 0;
};

class HostRates {
 public:
  static constexpr Duration kWindow = std::chrono::minutes(1);

  void Add(TimePoint at, const std::vector<HostView>& hosts);
  std::optional<PerMinute> Of(const std::string& host) const;

 private:
  struct Sample {
    TimePoint at;
    int64_t successes;
    int64_t failures;
  };
  std::map<std::string, std::deque<Sample>> samples_;
};

}  // namespace bulkhead::dashboard
