// HolderStore: the store's part for reservation holders (Store::holders(); the dashboard's Busy
// page): which worker holds each reservation. Store's contract (store.h) holds for every call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/store/job_record.h"
#include "bulkhead/store/store_callbacks.h"

namespace bulkhead {

class HolderStore : public StoreCallbacks {
 public:
  virtual ~HolderStore() = default;

  // Records that worker `wid` (its HELLO wid) holds the reservation of `jid` (a worker's FETCH
  // records it in its own step: FetchFor, ThrottleStore::Fetch). No change (and OK) when `jid` is
  // not reserved. The record ends with the reservation (ACK, FAIL, give-back, Move, Remove, FLUSH);
  // a later FETCH of the same job records its own holder or none. Every node sharing the store
  // sees it; it survives a restart as the reservation does (sqlite:, Redis).
  virtual void Set(const std::string& jid, const std::string& wid, Done durable) = 0;
  struct HeldJob {
    JobRecord job;  // reserved (kWorking), score = reservation expiry
    std::string wid;
  };
  using HeldJobsCallback = std::function<void(Result<std::vector<HeldJob>>)>;
  // Up to `limit` reserved jobs that have a holder, with it, in no particular order. A read.
  virtual void List(size_t limit, HeldJobsCallback cb) = 0;
};

}  // namespace bulkhead
