// TrackBook: the tracking records of an embedded store (memory:, sqlite:), jid -> TrackRecord,
// each persisted as one record of kTrackSpace (JSON). Records past their 30 minutes are answered
// as absent at once and deleted by Expire.
//
// Thread-compatible, like MemoryState (its owner).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bulkhead/store/change.h"
#include "bulkhead/store/track_record.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

inline constexpr char kTrackSpace[] = "track";  // jid -> TrackRecord (JSON)

class TrackBook {
 public:
  Status Load(const std::string& key, const std::string& value);
  // The record of `jid` unless absent or expired at `now_us`.
  const TrackRecord* Find(const std::string& jid, int64_t now_us) const;
  // TRACK SET.
  void Set(const TrackUpdate& update, int64_t now_us, std::vector<Change>& out);
  // A followed job's state changes: `start` (PUSH of a job with custom.track = 1) starts
  // following it; otherwise only a followed record changes.
  void SetState(const std::string& jid, const char* state, bool start, int64_t now_us,
                std::vector<Change>& out);
  size_t Expire(int64_t now_us, size_t limit, std::vector<Change>& out);
  void Clear();

 private:
  void Save(TrackRecord& r, int64_t now_us, std::vector<Change>& out);

  std::unordered_map<std::string, TrackRecord> records_;
  std::set<std::pair<int64_t, std::string>> expiry_;  // (updated_us + TTL, jid)
};

}  // namespace bulkhead
