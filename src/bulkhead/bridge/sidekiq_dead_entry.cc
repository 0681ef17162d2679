#include "bulkhead/bridge/sidekiq_dead_entry.h"

#include "bulkhead/util/json.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {

std::string SidekiqDeadEntry(std::string_view text, const DeadEntryContext& context) {
  auto parsed = ParseJson(text, context.max_json_depth);
  nlohmann::json job;
  if (parsed.ok() && parsed->is_object()) {
    job = std::move(*parsed);
  } else {
    // Sidekiq's shape of a job (job_util.rb normalize_item), with the text as its argument.
    job = {{"class", kUnreadableClass},
           {"args", nlohmann::json::array({std::string(text)})},
           {"queue", context.queue},
           {"jid", RandomHex(12)},
           {"retry", false},
           {"created_at", SidekiqTimestamp(context.now, context.format)}};
  }
  job["error_class"] = kRefusedErrorClass;
  job["error_message"] = context.reason;
  job["failed_at"] = SidekiqTimestamp(context.now, context.format);
  return DumpJson(job);
}

}  // namespace bulkhead
