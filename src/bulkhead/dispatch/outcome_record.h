// OutcomeRecord: what the delivery engine tells the application about a delivery or a host, as one
// JSON object — the single argument of every outcome job (`bulkhead.<event>`, on the
// delivery_outcomes_queue). This file is the one definition of that object: the outcome jobs
// pushed over Faktory write it with ToJson, and so must anything else that hands outcomes to the
// application (the Sidekiq bridge), so that a worker reads the same object whichever way it came.
// docs/deliveries.md ("Outcome jobs") documents it for the application's authors.
//
//   {"event": "delivery_dead",            always: what happened (kEvent* below)
//    "at": "2026-01-02T03:04:05.123Z",    always: when bulkhead saw it (RFC 3339, UTC)
//    "host": "push.example",              always: the destination host ("host" or "host:port")
//    "status": 400,                       always: the HTTP status of the answer that decided it,
//                                         null when there was none (a network failure, a refusal)
//    "reason": "http 400",                text; absent on host_available
//    "jid": "...", "jobtype": "webpush", "url": "https://...",   delivery events only
//    "context": {...},                    delivery events, when the job carried one: unchanged
//    "since": "2026-01-01T00:00:00Z"}     host events, when known: the start of the failing period
//
// Compatibility: fields are only ever added (a reader ignores those it does not know) and new
// events may appear (a reader ignores those it does not handle); an existing field keeps its
// meaning. Delivery events are those with a jid.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The events of today. An event name is lowercase letters, digits and '_'.
inline constexpr char kEventWebPushGone[] = "webpush_gone";
inline constexpr char kEventDeliveryDead[] = "delivery_dead";
inline constexpr char kEventHostUnavailable[] = "host_unavailable";
inline constexpr char kEventHostAvailable[] = "host_available";
// The push relay (docs/relay.md): APNs or FCM said the device token is gone, and the message
// carried no Unsubscribe-URL to tell its sender with.
inline constexpr char kEventRelayTokenGone[] = "relay_token_gone";

// The outcome job's jobtype for an event: "bulkhead." + event.
std::string OutcomeJobType(std::string_view event);

struct OutcomeRecord {
  std::string event;
  TimePoint at{};
  std::string host;
  std::optional<int> status;  // nullopt: JSON null
  std::string reason;         // empty: absent
  // Delivery events (jid not empty); empty strings are absent.
  std::string jid;
  std::string jobtype;
  std::string url;
  nlohmann::json context;  // null: absent; else the delivery's `context` object
  // Host events: the start of the host's failing period, when known.
  std::optional<TimePoint> since;

  bool about_delivery() const { return !jid.empty(); }
  bool operator==(const OutcomeRecord&) const = default;
};

// The JSON object (see the file comment). Deterministic: the same record gives the same text.
nlohmann::json ToJson(const OutcomeRecord& record);

// Reads ToJson's object back. InvalidArgument names the first field that is missing or of the
// wrong type; fields it does not know are ignored (written by a later version).
Result<OutcomeRecord> OutcomeRecordFromJson(const nlohmann::json& doc);

// The form of an outcome job's arguments (the delivery_outcome_args setting).
enum class OutcomeArgs {
  kObject,      // [the OutcomeRecord object]: the default
  kPositional,  // PositionalOutcomeArgs (deprecated: kept for one release)
};

// The positional arguments outcome jobs had before the object (delivery_outcome_args =
// "positional", deprecated): webpush_gone [url, jid]; delivery_dead [jid, jobtype, reason, url];
// host_unavailable and host_available [host]; any other event [the object].
nlohmann::json PositionalOutcomeArgs(const OutcomeRecord& record);

}  // namespace bulkhead
