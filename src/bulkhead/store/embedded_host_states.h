// EmbeddedHostStates: HostStateStore of the embedded store: MemoryState's records, made durable by
// the change log (the host_states table on sqlite:).
#pragma once

#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/host_state_store.h"

namespace bulkhead {

class EmbeddedHostStates final : public HostStateStore {
 public:
  explicit EmbeddedHostStates(EmbeddedContext& context) : context_(context) {}
  void Put(const HostStateRecord& record, Done durable) override;
  void Remove(const std::string& host, Done durable) override;
  void List(HostStatesCallback cb) override;

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
