// CronClaims: the store's part for cron (Store::cron_claims()): which firing of each cron entry
// was claimed, so that one node of those sharing the store pushes it. Store's contract (store.h)
// holds for every call.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "bulkhead/store/store_callbacks.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

class CronClaims : public StoreCallbacks {
 public:
  virtual ~CronClaims() = default;

  // Cron: claims the firing of cron entry `entry` due at `due` (atomically, for every node sharing
  // the store): true when the entry's last claimed firing is before `due` (or there is none), which
  // is then recorded as `due`; false (no change) when it is at or after `due`. FLUSH keeps these.
  using ClaimCallback = std::function<void(Result<bool>)>;
  virtual void Claim(const std::string& entry, TimePoint due, ClaimCallback durable) = 0;
  // The last claimed firing of every entry that has one (entry -> due time).
  using CronFiringsCallback = std::function<void(Result<std::map<std::string, TimePoint>>)>;
  virtual void List(CronFiringsCallback cb) = 0;
};

}  // namespace bulkhead
