// TrackStore: the store's part for job tracking (Store::tracks(); the record is
// store/track_record.h). Store's contract (store.h) holds for every call.
//
// Besides these, Fetch, Ack and FailReserved of a followed job set its state (working; success;
// dead when `next` is kDead, else failed) in the same change.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/store/track_record.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class TrackStore : public StoreCallbacks {
 public:
  virtual ~TrackStore() = default;

  using TrackCallback = std::function<void(Result<std::optional<TrackRecord>>)>;
  // TRACK SET: percent and desc (those given), updated at `now`; the record is made if missing.
  virtual void Set(TrackUpdate update, TimePoint now, Done durable) = 0;
  // Starts following `jid` (pushed with custom.track = 1) as enqueued, when the store holds it
  // outside working. Made right after Push (calls take effect in order: no FETCH comes between).
  virtual void Pushed(const std::string& jid, TimePoint now, Done durable) = 0;
  // The record of `jid`, or nullopt when there is none or it expired at `now`.
  virtual void Get(const std::string& jid, TimePoint now, TrackCallback cb) = 0;
  // Deletes up to `limit` records past their 30 minutes; `cb` gets how many.
  virtual void Expire(TimePoint now, size_t limit, CountCallback cb) = 0;
};

}  // namespace bulkhead
