#include "bulkhead/bridge/sidekiq_outcome_job.h"

#include <openssl/sha.h>

#include <cctype>

#include "bulkhead/util/hex.h"
#include "bulkhead/util/json.h"

namespace bulkhead {

std::string SidekiqOutcomeClasses::For(std::string_view event) const {
  if (event == kEventWebPushGone) return webpush_gone;
  if (event == kEventDeliveryDead) return delivery_dead;
  if (event == kEventHostUnavailable) return host_unavailable;
  if (event == kEventHostAvailable) return host_available;
  std::string name = "Bulkhead::";
  bool upper = true;
  for (char c : event) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

std::string SidekiqJidFor(std::string_view key) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  return HexLower(digest, 12);
}

std::string SidekiqOutcomeJob(const OutcomeRecord& record, std::string_view outcome_jid,
                              TimePoint now, const SidekiqOutcomeJobOptions& options) {
  nlohmann::json stamp = SidekiqTimestamp(now, options.format);
  nlohmann::json job = {{"class", options.classes.For(record.event)},
                        {"args", nlohmann::json::array({ToJson(record)})},
                        {"retry", true},
                        {"queue", options.queue},
                        {"jid", SidekiqJidFor(outcome_jid)},
                        {"created_at", stamp},
                        {"enqueued_at", stamp}};
  return DumpJson(job);
}

}  // namespace bulkhead
