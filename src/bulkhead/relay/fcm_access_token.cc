#include "bulkhead/relay/fcm_access_token.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "bulkhead/util/base64.h"
#include "bulkhead/util/percent_encoding.h"

namespace bulkhead {
namespace {

constexpr auto kRenewBefore = std::chrono::minutes(5);
constexpr auto kFailureBackoff = std::chrono::seconds(10);
constexpr auto kAssertionLifetime = std::chrono::hours(1);

}  // namespace

Result<ServiceAccount> ParseServiceAccount(std::string_view json) {
  auto doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object()) return Status::InvalidArgument("the service account file is not JSON");
  auto field = [&](const char* name) -> std::string {
    auto it = doc.find(name);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
  };
  if (field("type") != "service_account") {
    return Status::InvalidArgument(
        "the file is not a service account key (type is not "
        "\"service_account\")");
  }
  for (const char* required : {"client_email", "private_key", "token_uri"}) {
    if (field(required).empty()) {
      return Status::InvalidArgument(std::string("the service account has no ") + required);
    }
  }
  auto key = SigningKey::FromPem(field("private_key"));
  if (!key.ok()) {
    return Status::InvalidArgument("the service account's private_key: " +
                                   std::string(key.status().message()));
  }
  return ServiceAccount{field("project_id"), field("client_email"), field("private_key_id"),
                        field("token_uri"), std::move(*key)};
}

Result<std::string> FcmAssertion(const ServiceAccount& account, const std::string& audience,
                                 TimePoint now) {
  const int64_t iat = ToUnixMicros(now) / 1'000'000;
  nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!account.private_key_id.empty()) header["kid"] = account.private_key_id;
  nlohmann::json claims = {
      {"iss", account.client_email},
      {"scope", kFcmScope},
      {"aud", audience},
      {"iat", iat},
      {"exp", iat + std::chrono::duration_cast<std::chrono::seconds>(kAssertionLifetime).count()}};
  std::string input = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
  auto signature = account.key.SignRsaSha256(input);
  if (!signature.ok()) return signature.status();
  return input + "." + Base64UrlEncode(*signature);
}

FcmAccessToken::FcmAccessToken(ServiceAccount account, std::string token_url, Transport& transport,
                               const Clock& clock)
    : account_(std::move(account)),
      token_url_(token_url.empty() ? account_.token_uri : std::move(token_url)),
      transport_(transport),
      clock_(clock) {}

FcmAccessToken::~FcmAccessToken() { *alive_ = false; }

void FcmAccessToken::Get(Done done) {
  const TimePoint now = clock_.Now();
  if (!token_.empty() && now < valid_until_) {
    done(token_);
    return;
  }
  if (failure_ && now - failed_at_ < kFailureBackoff) {
    done(*failure_);
    return;
  }
  waiting_.push_back(std::move(done));
  if (waiting_.size() == 1) Exchange();
}

void FcmAccessToken::Exchange() {
  ++exchanges_;
  auto assertion = FcmAssertion(account_, account_.token_uri, clock_.Now());
  if (!assertion.ok()) {
    Finish(assertion.status());
    return;
  }
  HttpRequest request;
  request.method = "POST";
  request.url = token_url_;
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  request.body = "grant_type=" + PercentEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") +
                 "&assertion=" + PercentEncode(*assertion);
  transport_.Send(std::move(request), [this, alive = alive_](HttpResponse r) {
    if (!*alive) return;
    if (!r.ok()) {
      Finish(Status::Unavailable("fcm: the token endpoint " + token_url_ +
                                 " failed: " + r.error_message));
      return;
    }
    auto doc = nlohmann::json::parse(r.body, nullptr, false);
    if (r.status != 200 || !doc.is_object() || !doc.contains("access_token") ||
        !doc["access_token"].is_string()) {
      std::string error = doc.is_object() && doc.contains("error") ? doc["error"].dump() : "";
      StatusCode code = r.status >= 400 && r.status < 500 ? StatusCode::kPermissionDenied
                                                          : StatusCode::kUnavailable;
      Finish(Status(code, "fcm: the token endpoint refused the service account " +
                              account_.client_email + ": http " + std::to_string(r.status) + " " +
                              error));
      return;
    }
    int64_t expires_in = doc.value("expires_in", int64_t{3600});
    token_ = doc["access_token"].get<std::string>();
    valid_until_ = clock_.Now() + std::chrono::seconds(expires_in) - kRenewBefore;
    Finish(token_);
  });
}

void FcmAccessToken::Finish(Result<std::string> result) {
  if (result.ok()) {
    failure_.reset();
  } else {
    failure_ = result.status();
    failed_at_ = clock_.Now();
    spdlog::warn("{}", result.status().message());
  }
  std::vector<Done> waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& done : waiting) done(result);
}

}  // namespace bulkhead
