// RelayApps: the relay's apps as configured ([[relay.apns]], [[relay.fcm]]: config/relay_config.h),
// with their credentials read from their files once at start: an APNs app's ES256 key (token
// authentication, ApnsToken) or client certificate, an FCM app's service account and its access
// token (FcmAccessToken). The compatible URLs, which name no app, go to the kind's default app:
// the one marked `default = true`, else the first of its kind. Event loop thread only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/config/relay_config.h"
#include "bulkhead/relay/apns_token.h"
#include "bulkhead/relay/fcm_access_token.h"
#include "bulkhead/relay/rate_limiter.h"
#include "bulkhead/relay/relay_figures.h"
#include "bulkhead/transport/transport.h"

namespace bulkhead {

// Per-app intake limits (429 past them).
struct RelayAppLimits {
  explicit RelayAppLimits(const RelayLimits& l)
      : app(l.rate_per_second, std::chrono::seconds(1), l.burst),
        token(l.token_per_minute, std::chrono::minutes(1), l.token_burst) {}
  RateLimiter app;
  RateLimiter token;
};

struct ApnsApp {
  ApnsApp(RelayApnsApp c, RelayAppFigures& f)
      : config(std::move(c)), figures(f), limits(config.limits) {}
  RelayApnsApp config;
  std::optional<ApnsToken> token;                        // token authentication
  std::shared_ptr<const ClientCertificate> certificate;  // certificate authentication
  RelayAppFigures& figures;
  RelayAppLimits limits;
  std::optional<TimePoint> stopped_until;
};

struct FcmApp {
  FcmApp(RelayFcmApp c, RelayAppFigures& f)
      : config(std::move(c)), figures(f), limits(config.limits) {}
  RelayFcmApp config;
  std::string project;  // config.project, else the service account's project_id
  std::unique_ptr<FcmAccessToken> access;
  RelayAppFigures& figures;
  RelayAppLimits limits;
  std::optional<TimePoint> stopped_until;
};

class RelayApps {
 public:
  // Reads every app's credentials. InvalidArgument / NotFound name the app and the file.
  static Result<std::unique_ptr<RelayApps>> Load(const RelaySettings& settings,
                                                 Transport& transport, const Clock& clock,
                                                 RelayCounters& counters);

  // The app named `name` ("" = the default one), or null.
  ApnsApp* Apns(const std::string& name);
  FcmApp* Fcm(const std::string& name);

  std::vector<std::unique_ptr<ApnsApp>>& apns() { return apns_; }
  std::vector<std::unique_ptr<FcmApp>>& fcm() { return fcm_; }

 private:
  std::vector<std::unique_ptr<ApnsApp>> apns_;
  std::vector<std::unique_ptr<FcmApp>> fcm_;
};

}  // namespace bulkhead
