// TrackRecord: Faktory Enterprise's job tracking (TRACK SET / TRACK GET; docs/tracking.md) as the
// store keeps it. A record lives kTrackTtlUs after its last update (Faktory: "It lives for 30
// minutes"); each update (TRACK SET, or a state change of a job pushed with custom.track = 1)
// starts the 30 minutes again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bulkhead {

inline constexpr int64_t kTrackTtlUs = 30LL * 60 * 1'000'000;

// Job states as TRACK GET names them. "" while the job is not followed (its record holds only
// what TRACK SET gave): TRACK GET answers "unknown" then.
inline constexpr char kTrackEnqueued[] = "enqueued";
inline constexpr char kTrackWorking[] = "working";
inline constexpr char kTrackSuccess[] = "success";
inline constexpr char kTrackFailed[] = "failed";
inline constexpr char kTrackDead[] = "dead";

struct TrackRecord {
  std::string jid;
  std::optional<int> percent;  // 0..100
  std::optional<std::string> desc;
  std::string state;  // see above
  int64_t updated_us = 0;
};

// A TRACK SET: what it sets (an absent field keeps the stored value).
struct TrackUpdate {
  std::string jid;
  std::optional<int> percent;
  std::optional<std::string> desc;
};

}  // namespace bulkhead
