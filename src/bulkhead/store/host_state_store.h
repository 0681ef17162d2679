// HostStateStore: the store's part for delivery host states (Store::host_states(); the record is
// host_state_record.h). Store's contract (store.h) holds for every call.
//
// Delivery host states, one per host, kept beside the jobs so that a failing host's breaker,
// backoff and failing-since time survive a restart. Written only when they change (breaker
// transitions, failing-since set or cleared, ...), not per attempt. FLUSH keeps them (the
// delivery engine mirrors them in memory). On a store shared by several nodes, the other nodes
// hear of each Put and Remove (ClusterLink::SetHostStateHandler).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bulkhead/store/host_state_record.h"
#include "bulkhead/store/store_callbacks.h"

namespace bulkhead {

class HostStateStore : public StoreCallbacks {
 public:
  virtual ~HostStateStore() = default;

  using HostStatesCallback = std::function<void(Result<std::vector<HostStateRecord>>)>;
  // Adds or replaces the record of record.host.
  virtual void Put(const HostStateRecord& record, Done durable) = 0;
  // Deletes the record of `host`; no error (and no change) when there is none.
  virtual void Remove(const std::string& host, Done durable) = 0;
  // Every record, ordered by host.
  virtual void List(HostStatesCallback cb) = 0;
};

}  // namespace bulkhead
