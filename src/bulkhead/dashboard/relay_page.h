// The "Relay" page (docs/relay.md, "What each figure means"): one row per push relay app (APNs
// topic or FCM project) with its accepted, forwarded, retried, dead and gone messages, the
// requests refused by status, the mean forward latency and, when APNs or FCM refused the app's
// credentials, why it is stopped and until when; then the reasons APNs and FCM gave. Read-only;
// every value goes through Escape. Pure renderer.
#pragma once

#include <optional>
#include <string>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/relay/relay_figures.h"

namespace bulkhead::dashboard {

// Table #relay-apps (a muted #no-relay line when the server runs no relay) and #relay-reasons.
std::string RenderRelayPage(const PageContext& ctx, const std::optional<RelaySnapshot>& relay);

}  // namespace bulkhead::dashboard
