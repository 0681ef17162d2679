#include "bulkhead/store/embedded_cron_claims.h"

namespace bulkhead {

void EmbeddedCronClaims::Claim(const std::string& entry, TimePoint due, ClaimCallback durable) {
  if (context_.Refused(durable)) return;
  std::vector<Change> changes;
  bool claimed = context_.state().ClaimCronFiring(entry, ToUnixMicros(due), changes);
  context_.Commit(std::move(changes), [claimed, durable = std::move(durable)](Status s) {
    if (!s.ok()) return durable(s);
    durable(claimed);
  });
}

void EmbeddedCronClaims::List(CronFiringsCallback cb) {
  std::map<std::string, TimePoint> out;
  for (const auto& [entry, due_us] : context_.state().cron_firings()) {
    out[entry] = FromUnixMicros(due_us);
  }
  cb(std::move(out));
}

}  // namespace bulkhead
