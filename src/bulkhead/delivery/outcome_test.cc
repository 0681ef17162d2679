#include "bulkhead/delivery/outcome.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

constexpr JobKind kAllKinds[] = {JobKind::kWebPush, JobKind::kActivityPub, JobKind::kWebhook};

Outcome Http(JobKind kind, int status) { return Classify(kind, {TransportError::kNone, status}); }

TEST(OutcomeTest, Every2xxIsOkAndHealthy) {
  for (JobKind kind : kAllKinds) {
    for (int code = 200; code <= 299; ++code) {
      Outcome o = Http(kind, code);
      EXPECT_EQ(o.cls, OutcomeClass::kOk) << code;
      EXPECT_EQ(o.host, HostSignal::kHealthy) << code;
    }
  }
  EXPECT_EQ(Http(JobKind::kWebPush, 201).reason, "http 201");
}

TEST(OutcomeTest, WebPush404And410AreSubscriptionGone) {
  for (int code : {404, 410}) {
    Outcome o = Http(JobKind::kWebPush, code);
    EXPECT_EQ(o.cls, OutcomeClass::kGone) << code;
    EXPECT_EQ(o.host, HostSignal::kHealthy) << code;
    EXPECT_EQ(o.reason, "http " + std::to_string(code));
  }
}

TEST(OutcomeTest, ActivityPubAndWebhook404And410ArePermanent) {
  for (JobKind kind : {JobKind::kActivityPub, JobKind::kWebhook}) {
    for (int code : {404, 410}) {
      EXPECT_EQ(Http(kind, code).cls, OutcomeClass::kPermanent) << code;
    }
  }
}

TEST(OutcomeTest, Other4xxArePermanentWithReason) {
  for (JobKind kind : kAllKinds) {
    for (int code = 400; code <= 499; ++code) {
      if (code == 408 || code == 429) continue;
      if (kind == JobKind::kWebPush && (code == 404 || code == 410)) continue;
      Outcome o = Http(kind, code);
      EXPECT_EQ(o.cls, OutcomeClass::kPermanent) << code;
      EXPECT_EQ(o.host, HostSignal::kHealthy) << code;
      EXPECT_EQ(o.reason, "http " + std::to_string(code));
    }
  }
}

TEST(OutcomeTest, RequestTimeoutIsRetryableHostFailure) {
  for (JobKind kind : kAllKinds) {
    Outcome o = Http(kind, 408);
    EXPECT_EQ(o.cls, OutcomeClass::kRetryable);
    EXPECT_EQ(o.host, HostSignal::kFailure);
  }
}

TEST(OutcomeTest, TooManyRequestsAnd503AreRetryableOverload) {
  for (JobKind kind : kAllKinds) {
    for (int code : {429, 503}) {
      Outcome o = Http(kind, code);
      EXPECT_EQ(o.cls, OutcomeClass::kRetryable) << code;
      EXPECT_EQ(o.host, HostSignal::kOverloaded) << code;
    }
  }
}

TEST(OutcomeTest, Other5xxAreRetryableHostFailures) {
  for (JobKind kind : kAllKinds) {
    for (int code = 500; code <= 599; ++code) {
      if (code == 503) continue;
      Outcome o = Http(kind, code);
      EXPECT_EQ(o.cls, OutcomeClass::kRetryable) << code;
      EXPECT_EQ(o.host, HostSignal::kFailure) << code;
    }
  }
}

TEST(OutcomeTest, InformationalAndRedirectAnswersArePermanent) {
  for (int code : {100, 101, 199, 300, 301, 302, 304, 307, 308, 399}) {
    Outcome o = Http(JobKind::kActivityPub, code);
    EXPECT_EQ(o.cls, OutcomeClass::kPermanent) << code;
    EXPECT_EQ(o.host, HostSignal::kHealthy) << code;
  }
}

TEST(OutcomeTest, NonHttpStatusIsPermanentWithoutHostSignal) {
  for (int code : {0, -1, 99, 600, 999}) {
    Outcome o = Http(JobKind::kWebhook, code);
    EXPECT_EQ(o.cls, OutcomeClass::kPermanent) << code;
    EXPECT_EQ(o.host, HostSignal::kNone) << code;
  }
}

TEST(OutcomeTest, NetworkErrorsAreRetryableHostFailures) {
  for (JobKind kind : kAllKinds) {
    for (TransportError e :
         {TransportError::kTimeout, TransportError::kConnectError, TransportError::kDnsError,
          TransportError::kConnectionReset, TransportError::kTlsError}) {
      Outcome o = Classify(kind, {e, 0});
      EXPECT_EQ(o.cls, OutcomeClass::kRetryable) << TransportErrorName(e);
      EXPECT_EQ(o.host, HostSignal::kFailure) << TransportErrorName(e);
      EXPECT_EQ(o.reason, TransportErrorName(e));
    }
  }
}

TEST(OutcomeTest, TransportErrorWinsOverStaleStatus) {
  // A status left over from a partial response must not turn a timeout into a success.
  Outcome o = Classify(JobKind::kWebPush, {TransportError::kTimeout, 201});
  EXPECT_EQ(o.cls, OutcomeClass::kRetryable);
  EXPECT_EQ(o.reason, "timeout");
}

TEST(OutcomeTest, PolicyRefusalsArePermanentAndSayNothingAboutTheHost) {
  for (TransportError e : {TransportError::kBlockedAddress, TransportError::kTooManyRedirects}) {
    Outcome o = Classify(JobKind::kActivityPub, {e, 0});
    EXPECT_EQ(o.cls, OutcomeClass::kPermanent);
    EXPECT_EQ(o.host, HostSignal::kNone);
    EXPECT_EQ(o.reason, TransportErrorName(e));
  }
}

TEST(OutcomeTest, OtherLocalErrorsAreRetryableWithoutHostSignal) {
  Outcome o = Classify(JobKind::kWebhook, {TransportError::kOther, 0});
  EXPECT_EQ(o.cls, OutcomeClass::kRetryable);
  EXPECT_EQ(o.host, HostSignal::kNone);
}

TEST(OutcomeTest, JobKindNamesRoundTrip) {
  for (JobKind kind : kAllKinds) EXPECT_EQ(JobKindFromName(JobKindName(kind)), kind);
  EXPECT_STREQ(JobKindName(JobKind::kActivityPub), "activitypub");
  EXPECT_EQ(JobKindFromName("WebPush"), std::nullopt);
  EXPECT_EQ(JobKindFromName("email"), std::nullopt);
  EXPECT_EQ(JobKindFromName(""), std::nullopt);
}

TEST(OutcomeTest, Names) {
  EXPECT_STREQ(OutcomeClassName(OutcomeClass::kGone), "gone");
  EXPECT_STREQ(HostSignalName(HostSignal::kOverloaded), "overloaded");
  EXPECT_STREQ(TransportErrorName(TransportError::kTlsError), "tls_error");
}

}  // namespace
}  // namespace bulkhead
