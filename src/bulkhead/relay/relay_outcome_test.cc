#include "bulkhead/relay/relay_outcome.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

std::string Reason(const std::string& r) { return "{\"reason\":\"" + r + "\"}"; }

std::string FcmError(int code, const std::string& status, const std::string& error_code) {
  std::string details;
  if (!error_code.empty()) {
    details =
        ",\"details\":[{\"@type\":\"type.googleapis.com/google.firebase.fcm.v1.FcmError\","
        "\"errorCode\":\"" +
        error_code + "\"}]";
  }
  return "{\"error\":{\"code\":" + std::to_string(code) + ",\"message\":\"m\",\"status\":\"" +
         status + "\"" + details + "}}";
}

struct Case {
  int status;
  const char* reason;
  OutcomeClass cls;
  RelayAction action;
};

// Every reason of Apple's "Handling notification responses from APNs" table.
TEST(RelayOutcomeTest, EveryApnsReason) {
  const Case cases[] = {
      {200, "", OutcomeClass::kOk, RelayAction::kNone},
      {400, "BadCollapseId", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "BadDeviceToken", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "BadExpirationDate", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "BadMessageId", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "BadPriority", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "BadTopic", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "DeviceTokenNotForTopic", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "DuplicateHeaders", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "IdleTimeout", OutcomeClass::kRetryable, RelayAction::kNone},
      {400, "InvalidPushType", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "MissingDeviceToken", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "MissingTopic", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "PayloadEmpty", OutcomeClass::kPermanent, RelayAction::kNone},
      {400, "TopicDisallowed", OutcomeClass::kPermanent, RelayAction::kNone},
      {403, "BadCertificate", OutcomeClass::kRetryable, RelayAction::kStopApp},
      {403, "BadCertificateEnvironment", OutcomeClass::kRetryable, RelayAction::kStopApp},
      {403, "ExpiredProviderToken", OutcomeClass::kRetryable, RelayAction::kRenewToken},
      {403, "Forbidden", OutcomeClass::kRetryable, RelayAction::kStopApp},
      {403, "InvalidProviderToken", OutcomeClass::kRetryable, RelayAction::kStopApp},
      {403, "MissingProviderToken", OutcomeClass::kRetryable, RelayAction::kStopApp},
      {403, "UnrelatedKeyIdInToken", OutcomeClass::kRetryable, RelayAction::kStopApp},
      {403, "BadEnvironmentKeyIdInToken", OutcomeClass::kRetryable, RelayAction::kStopApp},
      {404, "BadPath", OutcomeClass::kPermanent, RelayAction::kNone},
      {405, "MethodNotAllowed", OutcomeClass::kPermanent, RelayAction::kNone},
      {410, "ExpiredToken", OutcomeClass::kGone, RelayAction::kNone},
      {410, "Unregistered", OutcomeClass::kGone, RelayAction::kNone},
      {413, "PayloadTooLarge", OutcomeClass::kPermanent, RelayAction::kNone},
      {429, "TooManyProviderTokenUpdates", OutcomeClass::kRetryable, RelayAction::kSlowApp},
      {429, "TooManyRequests", OutcomeClass::kRetryable, RelayAction::kNone},
      {500, "InternalServerError", OutcomeClass::kRetryable, RelayAction::kNone},
      {503, "ServiceUnavailable", OutcomeClass::kRetryable, RelayAction::kNone},
      {503, "Shutdown", OutcomeClass::kRetryable, RelayAction::kNone},
  };
  for (const Case& c : cases) {
    RelayVerdict v = ClassifyApns(c.status, c.status == 200 ? "" : Reason(c.reason));
    EXPECT_EQ(v.outcome.cls, c.cls) << c.status << " " << c.reason;
    EXPECT_EQ(v.action, c.action) << c.status << " " << c.reason;
    EXPECT_EQ(v.reason, c.reason);
    EXPECT_EQ(v.outcome.http_status, c.status);
  }
  EXPECT_EQ(ClassifyApns(503, "").outcome.host, HostSignal::kOverloaded);
  EXPECT_EQ(ClassifyApns(500, "not json").outcome.host, HostSignal::kFailure);
  EXPECT_EQ(ClassifyApns(400, Reason("BadDeviceToken")).outcome.reason, "http 400 BadDeviceToken");
}

// Every ErrorCode of the FCM HTTP v1 API reference.
TEST(RelayOutcomeTest, EveryFcmErrorCode) {
  const Case cases[] = {
      {200, "", OutcomeClass::kOk, RelayAction::kNone},
      {400, "INVALID_ARGUMENT", OutcomeClass::kPermanent, RelayAction::kNone},
      {404, "UNREGISTERED", OutcomeClass::kGone, RelayAction::kNone},
      {403, "SENDER_ID_MISMATCH", OutcomeClass::kPermanent, RelayAction::kNone},
      {429, "QUOTA_EXCEEDED", OutcomeClass::kRetryable, RelayAction::kSlowApp},
      {503, "UNAVAILABLE", OutcomeClass::kRetryable, RelayAction::kNone},
      {500, "INTERNAL", OutcomeClass::kRetryable, RelayAction::kNone},
      {401, "THIRD_PARTY_AUTH_ERROR", OutcomeClass::kRetryable, RelayAction::kStopApp},
  };
  for (const Case& c : cases) {
    RelayVerdict v = ClassifyFcm(c.status, c.status == 200 ? "{\"name\":\"projects/p/messages/1\"}"
                                                           : FcmError(c.status, "X", c.reason));
    EXPECT_EQ(v.outcome.cls, c.cls) << c.reason;
    EXPECT_EQ(v.action, c.action) << c.reason;
  }
  // Without details: error.status decides; a bad access token (401 UNAUTHENTICATED) renews it.
  EXPECT_EQ(ClassifyFcm(401, FcmError(401, "UNAUTHENTICATED", "")).action,
            RelayAction::kRenewToken);
  EXPECT_EQ(ClassifyFcm(403, FcmError(403, "PERMISSION_DENIED", "")).action, RelayAction::kStopApp);
}

TEST(RelayOutcomeTest, NoAnswerIsRetried) {
  HttpResponse r;
  r.error = TransportError::kTimeoutFirstByte;
  r.error_message = "no byte";
  RelayVerdict v = ClassifyRelayFailure(r);
  EXPECT_EQ(v.outcome.cls, OutcomeClass::kRetryable);
  EXPECT_EQ(v.outcome.host, HostSignal::kFailure);
}

}  // namespace
}  // namespace bulkhead
