// DeferredCronClaims: CronClaims that answer later (deferred_store.h), over an inner store's.
#pragma once

#include "bulkhead/store/cron_claims.h"
#include "bulkhead/store/testing/deferred_later.h"

namespace bulkhead {

class DeferredCronClaims final : public CronClaims {
 public:
  DeferredCronClaims(CronClaims& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  void Claim(const std::string& entry, TimePoint due, ClaimCallback durable) override {
    inner_.Claim(entry, due, later_(std::move(durable)));
  }
  void List(CronFiringsCallback cb) override { inner_.List(later_(std::move(cb))); }

 private:
  CronClaims& inner_;
  Later later_;
};

}  // namespace bulkhead
