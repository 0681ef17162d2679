#include "bulkhead/store/redis_cron_claims.h"

#include <cstdlib>

namespace bulkhead {

void RedisCronClaims::Claim(const std::string& entry, TimePoint due, ClaimCallback durable) {
  calls_.EvalReplicated(Script::kClaimCron, "claim_cron",
                        {entry, std::to_string(ToUnixMicros(due))},
                        [durable = std::move(durable)](Result<RedisReply> r) {
                          if (!r.ok()) return durable(r.status());
                          durable(r->integer() == 1);
                        });
}

void RedisCronClaims::List(CronFiringsCallback cb) {
  calls_.Command("list_cron_firings", {"HGETALL", calls_.key_prefix() + "cron"},
                 [cb = std::move(cb)](Result<RedisReply> r) {
                   if (!r.ok()) return cb(r.status());
                   std::map<std::string, TimePoint> out;
                   const auto& e = r->elements();
                   for (size_t i = 0; i + 1 < e.size(); i += 2) {
                     out[e[i].str()] =
                         FromUnixMicros(std::strtoll(e[i + 1].str().c_str(), nullptr, 10));
                   }
                   cb(std::move(out));
                 });
}

}  // namespace bulkhead
