#include "bulkhead/relay/apns_token.h"

#include <nlohmann/json.hpp>

#include "bulkhead/util/base64.h"

namespace bulkhead {

Result<ApnsToken> ApnsToken::Create(VapidKey key, std::string key_id, std::string team_id,
                                    const Clock& clock, std::chrono::seconds refresh_after) {
  if (key_id.empty()) return Status::InvalidArgument("apns: key_id is empty");
  if (team_id.empty()) return Status::InvalidArgument("apns: team_id is empty");
  if (refresh_after < kApnsTokenMinAge || refresh_after >= kApnsTokenMaxAge) {
    return Status::InvalidArgument("apns: a token must be refreshed after 20 to 60 minutes");
  }
  return ApnsToken(std::move(key), std::move(key_id), std::move(team_id), clock, refresh_after);
}

Result<std::string> ApnsToken::Current() {
  const TimePoint now = clock_->Now();
  const bool old = issued_at_ && now - *issued_at_ >= refresh_after_;
  if (!issued_at_ || old || stale_) return Sign(now);
  return token_;
}

bool ApnsToken::Expired() {
  if (!issued_at_ || clock_->Now() - *issued_at_ < kApnsTokenMinAge) return false;
  stale_ = true;
  return true;
}

Result<std::string> ApnsToken::Sign(TimePoint now) {
  const int64_t iat = ToUnixMicros(now) / 1'000'000;
  const std::string header = nlohmann::json{{"alg", "ES256"}, {"kid", key_id_}}.dump();
  const std::string claims = nlohmann::json{{"iss", team_id_}, {"iat", iat}}.dump();
  std::string signing_input = Base64UrlEncode(header) + "." + Base64UrlEncode(claims);
  auto signature = key_.SignEs256(signing_input);
  if (!signature.ok()) return signature.status();
  token_ = signing_input + "." + Base64UrlEncode(*signature);
  issued_at_ = now;
  stale_ = false;
  ++signed_;
  return token_;
}

}  // namespace bulkhead
