// What an APNs or FCM answer means for the message, for the app's compartment and for the app's
// credentials. Pure classification: no I/O, no state.
//
// APNs (Apple, "Handling notification responses from APNs": status and the JSON body's `reason`):
//   200                                   ok
//   410 Unregistered, ExpiredToken        gone: the token is no longer valid (unsubscribe)
//   400 BadDeviceToken (also a production token sent to the sandbox or the reverse),
//       DeviceTokenNotForTopic, BadCollapseId, BadExpirationDate, BadPriority, BadTopic,
//       MissingTopic, TopicDisallowed, PayloadEmpty, InvalidPushType, …  dead, with the reason
//   400 IdleTimeout                       retried (the connection was idle; a new one serves)
//   403 InvalidProviderToken, MissingProviderToken, BadCertificate, BadCertificateEnvironment,
//       Forbidden, …                      the app stops: its credentials are refused
//   403 ExpiredProviderToken              a new token, then retried
//   413 PayloadTooLarge                   dead
//   429 TooManyProviderTokenUpdates       the app waits (its token changed too often)
//   429 TooManyRequests                   retried (that one token is sent to too often)
//   500 InternalServerError, 503 ServiceUnavailable, Shutdown, network, timeout   retried
// FCM HTTP v1 (Google, "FCM HTTP v1 API reference", ErrorCode; the body's
// error.details[].errorCode, else error.status):
//   200 ok; 404 UNREGISTERED gone; 400 INVALID_ARGUMENT dead; 403 SENDER_ID_MISMATCH dead (the
//   token belongs to another project); 401 THIRD_PARTY_AUTH_ERROR, 403 PERMISSION_DENIED the app
//   stops; 401 UNAUTHENTICATED a new access token, then retried; 429 QUOTA_EXCEEDED the app
//   waits; 500 INTERNAL, 503 UNAVAILABLE retried.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/compartment/outcome.h"
#include "bulkhead/transport/transport.h"

namespace bulkhead {

enum class RelayAction {
  kNone,
  kStopApp,     // the app's credentials are refused: hold the app's compartment, say why
  kRenewToken,  // the provider/access token expired: make a new one before the next attempt
  kSlowApp,     // the service asks the app for less: hold the app's compartment a while
};

struct RelayVerdict {
  Outcome outcome;
  RelayAction action = RelayAction::kNone;
  // APNs `reason` / FCM errorCode, "" for a success, or the transport's error word.
  std::string reason;
};

// `body` is the answer's JSON body (APNs: {"reason": …}); anything else reads as no reason.
RelayVerdict ClassifyApns(int status, std::string_view body);
RelayVerdict ClassifyFcm(int status, std::string_view body);
// An attempt that got no answer (network, timeout, a request that could not be built).
RelayVerdict ClassifyRelayFailure(const HttpResponse& response);

}  // namespace bulkhead
