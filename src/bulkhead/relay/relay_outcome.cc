#include "bulkhead/relay/relay_outcome.h"

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

RelayVerdict Verdict(OutcomeClass cls, HostSignal host, int status, std::string reason,
                     RelayAction action = RelayAction::kNone) {
  std::string text = "http " + std::to_string(status);
  if (!reason.empty()) text += " " + reason;
  return RelayVerdict{Outcome{cls, host, text, status}, action, std::move(reason)};
}

std::string ApnsReason(std::string_view body) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_object()) return "";
  auto r = doc.find("reason");
  return r != doc.end() && r->is_string() ? r->get<std::string>() : "";
}

std::string FcmReason(std::string_view body) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_object() || !doc.contains("error") || !doc["error"].is_object()) return "";
  const auto& error = doc["error"];
  if (auto details = error.find("details"); details != error.end() && details->is_array()) {
    for (const auto& d : *details) {
      if (d.is_object() && d.contains("errorCode") && d["errorCode"].is_string()) {
        return d["errorCode"].get<std::string>();
      }
    }
  }
  auto status = error.find("status");
  return status != error.end() && status->is_string() ? status->get<std::string>() : "";
}

// The 5xx, 429 and other answers both services treat alike.
RelayVerdict Common(int status, std::string reason) {
  if (status == 429 || status == 503) {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kOverloaded, status, std::move(reason));
  }
  if (status >= 500 || status == 408) {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kFailure, status, std::move(reason));
  }
  return Verdict(OutcomeClass::kPermanent, HostSignal::kHealthy, status, std::move(reason));
}

}  // namespace

RelayVerdict ClassifyApns(int status, std::string_view body) {
  std::string reason = ApnsReason(body);
  if (status >= 200 && status < 300) {
    return Verdict(OutcomeClass::kOk, HostSignal::kHealthy, status, "");
  }
  if (status == 410) {
    return Verdict(OutcomeClass::kGone, HostSignal::kHealthy, status, std::move(reason));
  }
  if (status == 400 && reason == "IdleTimeout") {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kNone, status, std::move(reason));
  }
  if (status == 403 && reason == "ExpiredProviderToken") {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kNone, status, std::move(reason),
                   RelayAction::kRenewToken);
  }
  if (status == 403) {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kNone, status, std::move(reason),
                   RelayAction::kStopApp);
  }
  if (status == 429 && reason == "TooManyProviderTokenUpdates") {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kOverloaded, status, std::move(reason),
                   RelayAction::kSlowApp);
  }
  if (status == 429) {  // TooManyRequests: one device token, not the app
    return Verdict(OutcomeClass::kRetryable, HostSignal::kNone, status, std::move(reason));
  }
  return Common(status, std::move(reason));
}

RelayVerdict ClassifyFcm(int status, std::string_view body) {
  std::string reason = FcmReason(body);
  if (status >= 200 && status < 300) {
    return Verdict(OutcomeClass::kOk, HostSignal::kHealthy, status, "");
  }
  if (reason == "UNREGISTERED" || (status == 404 && reason == "NOT_FOUND")) {
    return Verdict(OutcomeClass::kGone, HostSignal::kHealthy, status, std::move(reason));
  }
  if (status == 401 && reason != "THIRD_PARTY_AUTH_ERROR") {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kNone, status, std::move(reason),
                   RelayAction::kRenewToken);
  }
  if (reason == "SENDER_ID_MISMATCH" || reason == "INVALID_ARGUMENT") {
    return Verdict(OutcomeClass::kPermanent, HostSignal::kHealthy, status, std::move(reason));
  }
  if (status == 401 || status == 403) {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kNone, status, std::move(reason),
                   RelayAction::kStopApp);
  }
  if (status == 429) {
    return Verdict(OutcomeClass::kRetryable, HostSignal::kOverloaded, status, std::move(reason),
                   RelayAction::kSlowApp);
  }
  return Common(status, std::move(reason));
}

RelayVerdict ClassifyRelayFailure(const HttpResponse& response) {
  Outcome outcome = Classify(JobKind::kWebhook, AttemptResult{response.error, response.status});
  if (!response.error_message.empty()) outcome.reason += ": " + response.error_message;
  return RelayVerdict{std::move(outcome), RelayAction::kNone, TransportErrorName(response.error)};
}

}  // namespace bulkhead
