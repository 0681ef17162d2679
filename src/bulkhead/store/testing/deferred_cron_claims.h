// DeferredCronClaims: CronClaims that answer later (deferred_store.h), over an inner store's; a
// test may make its claims fail, as a store that cannot be reached does.
#pragma once

#include "bulkhead/store/cron_claims.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredCronClaims final : public CronClaims {
 public:
  DeferredCronClaims(CronClaims& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  void Claim(const std::string& entry, TimePoint due, ClaimCallback durable) override {
    if (!fail_with_.ok()) {
      later_(std::move(durable))(fail_with_);
      return;
    }
    inner_.Claim(entry, due, later_(std::move(durable)));
  }
  // Every Claim from now on answers `s` without claiming (Status::Ok(): claims work again).
  void FailWith(Status s) { fail_with_ = std::move(s); }
  void List(CronFiringsCallback cb) override { inner_.List(later_(std::move(cb))); }

 private:
  CronClaims& inner_;
  Later later_;
  Status fail_with_;
};

}  // namespace bulkhead
