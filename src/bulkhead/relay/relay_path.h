// The relay's URLs (docs/relay.md, "The URL to register"). The compatible forms are the Mastodon
// push relays' (mastodon/webpush-apn-relay main.go: `POST /relay-to/{environment}/{token}/
// {extra...}`; mastodon/webpush-fcm-relay: `/relay-to/fcm/{token}/...`), so an app moves by
// changing the host name; they name no app and go to the kind's default app. New apps may put
// their app's name first:
//   /relay-to/production/TOKEN[/EXTRA...]        APNs, production, the default APNs app
//   /relay-to/development/TOKEN[/EXTRA...]       APNs, sandbox
//   /relay-to/fcm/TOKEN[/EXTRA...]               FCM, the default FCM app
//   /relay-to/APP/production|development|fcm/TOKEN[/EXTRA...]   the app named APP
// EXTRA (any further segments, joined by '/') reaches the device as the custom key `x`.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

enum class RelayService { kApns, kFcm };

const char* RelayServiceName(RelayService service);  // "apns", "fcm"

struct RelayTarget {
  std::string app;  // empty: the service's default app
  RelayService service = RelayService::kApns;
  bool production = true;  // APNs: production or development (sandbox)
  std::string token;       // the device token (APNs: hex) or FCM registration token
  std::string extra;       // "" when none
};

// The path of the health check, answered 200 whatever the apps' state.
inline constexpr char kRelayHealthPath[] = "/relay-to/_health";

// Reads a request path (without its query). InvalidArgument names the problem ("unknown
// environment \"staging\"", "the device token must be hexadecimal"); NotFound when the path is
// not under /relay-to/. Segments are percent-decoded.
Result<RelayTarget> ParseRelayPath(std::string_view path);

}  // namespace bulkhead
