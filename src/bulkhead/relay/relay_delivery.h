// RelayDelivery: the relay's job types, run by the Dispatcher (dispatch/delivery_extension.h).
//   relay.apns  args[0] = {"app": NAME, "environment": "production"|"development", "token": HEX,
//                          "payload": {APNs body}, "priority": 5|10, "expiration": UNIX S (opt),
//                          "collapse_id": TEXT (opt), "ttl": S (opt), "unsubscribe_url": URL (opt)}
//   relay.fcm   args[0] = {"app": NAME, "token": TOKEN, "message": {FCM message, no token},
//                          "ttl": S (opt), "unsubscribe_url": URL (opt)}
// RelayAcceptor writes them (relay_acceptor.h); nothing secret is in them: the credentials stay
// with the app (relay_apps.h) and are added when the request is built.
//
// Each app is a compartment of its own ("apns:NAME", "fcm:NAME"), with the dispatcher's adaptive
// cap, breaker and Retry-After; a job's deadline is its TTL (at least a minute; a day without one).
// What an answer means: relay_outcome.h. Besides that:
//   gone (APNs 410, FCM UNREGISTERED): the message's Unsubscribe-URL is DELETEd by a `webhook`
//     job (compartments and retries of its own), or, without one, bulkhead.relay_token_gone;
//   credentials refused (APNs 403 InvalidProviderToken…, FCM 401/403): the app's compartment
//     holds for kStopHold (its jobs wait, parked, within their TTL), one log line, the
//     bulkhead_relay_app_stopped gauge and the dashboard say why; the next attempt after it is
//     the probe that resumes it;
//   ExpiredProviderToken / FCM 401: a new token for the next attempt (within Apple's window);
//   TooManyProviderTokenUpdates, FCM QUOTA_EXCEEDED: the app's compartment holds for kSlowHold.
#pragma once

#include "bulkhead/dispatch/delivery_extension.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/relay/relay_apps.h"
#include "bulkhead/relay/relay_figures.h"
#include "bulkhead/relay/relay_outcome.h"

namespace bulkhead {

inline constexpr char kRelayApnsJobType[] = "relay.apns";
inline constexpr char kRelayFcmJobType[] = "relay.fcm";

class RelayDelivery final : public DeliveryExtension {
 public:
  static constexpr Duration kStopHold = std::chrono::minutes(10);
  static constexpr Duration kSlowHold = std::chrono::minutes(1);

  // All must outlive it. `deadlines`: each forward attempt's.
  RelayDelivery(Engine& engine, RelayApps& apps, RelayCounters& counters, const Clock& clock,
                Deadlines deadlines = {});

  bool Handles(std::string_view jobtype) const override;
  Status Read(const nlohmann::json& arg, TimePoint born, DeliveryJob& job) const override;
  void Build(const DeliveryJob& job, BuildDone done) override;
  ExtensionVerdict Judge(const DeliveryJob& job, const HttpResponse& response, Duration latency,
                         TimePoint now) override;
  bool OnGone(const DeliveryJob& job, const Outcome& outcome) override;

 private:
  Result<HttpRequest> BuildApns(const DeliveryJob& job, ApnsApp& app);
  void BuildFcm(const DeliveryJob& job, FcmApp& app, BuildDone done);
  // The app's state after a verdict: stops, slows or resumes it; returns the hold to apply.
  std::optional<TimePoint> Act(const DeliveryJob& job, const RelayVerdict& verdict, TimePoint now);

  Engine& engine_;
  RelayApps& apps_;
  RelayCounters& counters_;
  const Clock& clock_;
  Deadlines deadlines_;
};

}  // namespace bulkhead
