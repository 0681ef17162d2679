// ApnsToken: the provider authentication token of APNs token-based connections (Apple,
// "Establishing a token-based connection to APNs"): a JWT signed ES256 with the team's .p8 key,
//   header {"alg": "ES256", "kid": KEY_ID}, claims {"iss": TEAM_ID, "iat": unix seconds},
// sent as `authorization: bearer <JWT>`. Apple refuses a token older than one hour
// (ExpiredProviderToken) and one refreshed more often than every 20 minutes
// (TooManyProviderTokenUpdates), so one token is reused for `refresh_after` (default 50 minutes,
// within [20, 60)) and never replaced sooner than 20 minutes after it was made, whatever asks.
// Time comes from the injected clock. Event loop thread only (not thread-safe).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "bulkhead/encoders/vapid.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Apple's window: no more often than every 20 minutes, no older than 60.
inline constexpr std::chrono::minutes kApnsTokenMinAge{20};
inline constexpr std::chrono::minutes kApnsTokenMaxAge{60};

class ApnsToken {
 public:
  // `key`: the .p8 key (PKCS#8 P-256; VapidKey reads it). InvalidArgument when key_id or team_id
  // is empty or `refresh_after` is outside [20 min, 60 min).
  static Result<ApnsToken> Create(VapidKey key, std::string key_id, std::string team_id,
                                  const Clock& clock,
                                  std::chrono::seconds refresh_after = std::chrono::minutes(50));

  // The current token, signed anew once the last one is `refresh_after` old.
  Result<std::string> Current();
  // APNs said the token expired (ExpiredProviderToken): the next Current() signs a new one, unless
  // the current one is younger than 20 minutes (then APNs and this clock disagree; signing again
  // would only earn TooManyProviderTokenUpdates). Returns whether it will.
  bool Expired();

  // When the current token was signed (nullopt: none yet), and how many were signed.
  std::optional<TimePoint> issued_at() const { return issued_at_; }
  uint64_t signed_count() const { return signed_; }

 private:
  ApnsToken(VapidKey key, std::string key_id, std::string team_id, const Clock& clock,
            std::chrono::seconds refresh_after)
      : key_(std::move(key)),
        key_id_(std::move(key_id)),
        team_id_(std::move(team_id)),
        clock_(&clock),
        refresh_after_(refresh_after) {}
  Result<std::string> Sign(TimePoint now);

  VapidKey key_;
  std::string key_id_;
  std::string team_id_;
  const Clock* clock_;
  std::chrono::seconds refresh_after_;
  std::string token_;
  std::optional<TimePoint> issued_at_;
  bool stale_ = false;
  uint64_t signed_ = 0;
};

}  // namespace bulkhead
