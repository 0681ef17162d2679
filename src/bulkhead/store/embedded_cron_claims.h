// EmbeddedCronClaims: CronClaims of the embedded store. MemoryState does the work
// (memory_state_unique.cc), the change log makes it durable.
#pragma once

#include "bulkhead/store/cron_claims.h"
#include "bulkhead/store/embedded_context.h"

namespace bulkhead {

class EmbeddedCronClaims final : public CronClaims {
 public:
  explicit EmbeddedCronClaims(EmbeddedContext& context) : context_(context) {}
  void Claim(const std::string& entry, TimePoint due, ClaimCallback durable) override;
  void List(CronFiringsCallback cb) override;

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
