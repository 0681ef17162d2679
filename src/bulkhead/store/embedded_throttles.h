// EmbeddedThrottles: ThrottleStore of the embedded store. Slots live in memory beside the working
// set; after a restart every stored reservation holds a slot again (see store/throttle_slots.h).
#pragma once

#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/throttle_store.h"

namespace bulkhead {

class EmbeddedThrottles final : public ThrottleStore {
 public:
  explicit EmbeddedThrottles(EmbeddedContext& context) : context_(context) {}
  void Fetch(const std::vector<std::string>& queues, const ThrottledFetch& throttled, TimePoint now,
             JobCallback cb) override {
    context_.Fetch(queues, &throttled, throttled.wid, now, std::move(cb));
  }
  void Uses(const std::vector<QueueThrottle>& throttles, TimePoint now,
            ThrottleUsesCallback cb) override {
    cb(context_.state().ThrottleUses(throttles, ToUnixMicros(now)));
  }

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
