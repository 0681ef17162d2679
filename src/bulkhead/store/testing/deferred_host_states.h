// DeferredHostStates: a HostStateStore that answers later (deferred_store.h), over an inner
// store's.
#pragma once

#include "bulkhead/store/host_state_store.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredHostStates final : public HostStateStore {
 public:
  DeferredHostStates(HostStateStore& inner, Later later)
      : inner_(inner), later_(std::move(later)) {}
  void Put(const HostStateRecord& record, Done durable) override {
    inner_.Put(record, later_(std::move(durable)));
  }
  void Remove(const std::string& host, Done durable) override {
    inner_.Remove(host, later_(std::move(durable)));
  }
  void List(HostStatesCallback cb) override { inner_.List(later_(std::move(cb))); }

 private:
  HostStateStore& inner_;
  Later later_;
};

}  // namespace bulkhead
