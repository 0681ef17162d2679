// DeferredThrottles: a ThrottleStore that answers later (deferred_store.h), over an inner store's.
#pragma once

#include "bulkhead/store/testing/deferred_later.h"
#include "bulkhead/store/throttle_store.h"

namespace bulkhead {

class DeferredThrottles final : public ThrottleStore {
 public:
  DeferredThrottles(ThrottleStore& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  void Fetch(const std::vector<std::string>& queues, const ThrottledFetch& throttled, TimePoint now,
             JobCallback cb) override {
    inner_.Fetch(queues, throttled, now, later_(std::move(cb)));
  }
  void Uses(const std::vector<QueueThrottle>& throttles, TimePoint now,
            ThrottleUsesCallback cb) override {
    inner_.Uses(throttles, now, later_(std::move(cb)));
  }

 private:
  ThrottleStore& inner_;
  Later later_;
};

}  // namespace bulkhead
