#include "bulkhead/compartment/outcome.h"

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
    const std::pair<TransportError, const char*> cases[] = {
        {TransportError::kConnectTimeout, "timeout"},
        {TransportError::kTimeoutFirstByte, "timeout"},
        {TransportError::kTimeoutTotal, "timeout"},
        {TransportError::kLowSpeed, "timeout"},
        {TransportError::kConnectRefused, "connect_error"},
        {TransportError::kDns, "dns_error"},
        {TransportError::kReset, "connection_reset"},
        {TransportError::kTls, "tls_error"}};
    for (auto [e, reason] : cases) {
      Outcome o = Classify(kind, {e, 0});
      EXPECT_EQ(o.cls, OutcomeClass::kRetryable) << TransportErrorName(e);
      EXPECT_EQ(o.host, HostSignal::kFailure) << TransportErrorName(e);
      EXPECT_EQ(o.reason, reason) << TransportErrorName(e);
    }
  }
}

TEST(OutcomeTest, TransportErrorWinsOverStaleStatus) {
  // A status left over from a partial response must not turn a timeout into a success.
  Outcome o = Classify(JobKind::kWebPush, {TransportError::kTimeoutTotal, 201});
  EXPECT_EQ(o.cls, OutcomeClass::kRetryable);
  EXPECT_EQ(o.reason, "timeout");
}

TEST(OutcomeTest, PolicyRefusalsArePermanentAndSayNothingAboutTheHost) {
  const std::pair<TransportError, const char*> cases[] = {
      {TransportError::kSsrfRefused, "blocked_address"},
      {TransportError::kTooManyRedirects, "too_many_redirects"}};
  for (auto [e, reason] : cases) {
    Outcome o = Classify(JobKind::kActivityPub, {e, 0});
    EXPECT_EQ(o.cls, OutcomeClass::kPermanent);
    EXPECT_EQ(o.host, HostSignal::kNone);
    EXPECT_EQ(o.reason, reason);
  }
}

TEST(OutcomeTest, OtherLocalErrorsAreRetryableWithoutHostSignal) {
  for (TransportError e : {TransportError::kOther, TransportError::kCancelled}) {
    Outcome o = Classify(JobKind::kWebhook, {e, 0});
    EXPECT_EQ(o.cls, OutcomeClass::kRetryable);
    EXPECT_EQ(o.host, HostSignal::kNone);
    EXPECT_EQ(o.reason, "other");
  }
}

// Outcome jobs carry the status of the answer (docs/deliveries.md); a transport failure has none,
// not even a status left over from a partial response.
TEST(OutcomeTest, EveryHttpAnswerCarriesItsStatusAndTransportFailuresNone) {
  for (JobKind kind : kAllKinds) {
    for (int code : {100, 201, 302, 400, 404, 408, 410, 429, 500, 503}) {
      EXPECT_EQ(Http(kind, code).http_status, code) << code;
    }
    EXPECT_EQ(Classify(kind, {TransportError::kTimeoutTotal, 201}).http_status, 0);
    EXPECT_EQ(Classify(kind, {TransportError::kSsrfRefused, 0}).http_status, 0);
  }
}

TEST(OutcomeTest, HttpStatusOfReasonReadsBackWhatClassifyWrote) {
  for (int code : {101, 200, 404, 410, 503, 599}) {
    EXPECT_EQ(HttpStatusOfReason(Http(JobKind::kWebhook, code).reason), code) << code;
  }
  for (const char* other : {"timeout", "timeout: Connection timed out", "http 99", "http 600",
                            "http 50x", "http 5031", "HTTP 503", "host unavailable", ""}) {
    EXPECT_EQ(HttpStatusOfReason(other), 0) << other;
  }
}

TEST(OutcomeTest, Names) {
  EXPECT_STREQ(OutcomeClassName(OutcomeClass::kGone), "gone");
  EXPECT_STREQ(HostSignalName(HostSignal::kOverloaded), "overloaded");
  EXPECT_STREQ(TransportErrorName(TransportError::kTls), "tls");
}

}  // namespace
}  // namespace bulkhead
