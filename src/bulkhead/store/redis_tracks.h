// RedisTracks: TrackStore of the Redis store. Each operation is one script
// (redis_scripts/track_*.lua, with track_lib.lua); a record is the hash {NS}:track:JID (layout in
// redis_scripts/README.md).
#pragma once

#include "bulkhead/store/redis_calls.h"
#include "bulkhead/store/track_store.h"

namespace bulkhead {

class RedisTracks final : public TrackStore {
 public:
  explicit RedisTracks(RedisCalls& calls) : calls_(calls) {}
  void Set(TrackUpdate update, TimePoint now, Done durable) override;
  void Pushed(const std::string& jid, TimePoint now, Done durable) override;
  void Get(const std::string& jid, TimePoint now, TrackCallback cb) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;

 private:
  RedisCalls& calls_;
};

}  // namespace bulkhead
