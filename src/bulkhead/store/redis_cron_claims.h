// RedisCronClaims: CronClaims of the Redis store: claim_cron.lua, and the hash {NS}:cron (entry ->
// due µs) it writes (redis_scripts/README.md).
#pragma once

#include "bulkhead/store/cron_claims.h"
#include "bulkhead/store/redis_calls.h"

namespace bulkhead {

class RedisCronClaims final : public CronClaims {
 public:
  explicit RedisCronClaims(RedisCalls& calls) : calls_(calls) {}
  void Claim(const std::string& entry, TimePoint due, ClaimCallback durable) override;
  void List(CronFiringsCallback cb) override;

 private:
  RedisCalls& calls_;
};

}  // namespace bulkhead
