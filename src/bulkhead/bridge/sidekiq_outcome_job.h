// Outcome jobs as Sidekiq jobs: what the bridge writes to the application's Redis for each
// delivery outcome (dispatch/outcome_jobs.h), so that the application's own Sidekiq runs them. A
// job as Sidekiq::Client#push writes it (lib/sidekiq/client.rb normalize_item and atomic_push):
//   {"class": one of the configured class names (by event), "args": [the OutcomeRecord object,
//    exactly dispatch/outcome_record.h's ToJson], "retry": true, "queue": Q,
//    "jid": 24 hex characters, "created_at": T, "enqueued_at": T}
// with T in the configured form (sidekiq_time.h: float seconds for Sidekiq 6 and 7, integer
// milliseconds for Sidekiq 8). The jid is derived from the outcome job's own jid (which its event
// gives: "bh-gone-<delivery jid>", ...), so the same event written twice carries the same Sidekiq
// jid and a worker can recognise the repeat.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/bridge/sidekiq_time.h"
#include "bulkhead/dispatch/outcome_record.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

// The Sidekiq worker class of each outcome event (the sidekiq.*_class settings).
struct SidekiqOutcomeClasses {
  std::string webpush_gone = "Bulkhead::WebpushGone";
  std::string delivery_dead = "Bulkhead::DeliveryDead";
  std::string host_unavailable = "Bulkhead::HostUnavailable";
  std::string host_available = "Bulkhead::HostAvailable";

  // The class of `event`; an event of a later version: "Bulkhead::" + its name in CamelCase.
  std::string For(std::string_view event) const;
};

// 24 lowercase hex characters (Sidekiq's jid form: SecureRandom.hex(12)), the first 12 bytes of
// the SHA-256 of `key`.
std::string SidekiqJidFor(std::string_view key);

struct SidekiqOutcomeJobOptions {
  std::string queue = "default";
  SidekiqOutcomeClasses classes;
  SidekiqTimeFormat format = SidekiqTimeFormat::kFloatSeconds;
};

// The Sidekiq job's JSON for `record`, whose outcome job had the jid `outcome_jid`, written at
// `now`.
std::string SidekiqOutcomeJob(const OutcomeRecord& record, std::string_view outcome_jid,
                              TimePoint now, const SidekiqOutcomeJobOptions& options);

}  // namespace bulkhead
