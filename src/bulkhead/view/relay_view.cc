#include "bulkhead/view/relay_view.h"

#include "bulkhead/util/time_format.h"

namespace bulkhead {

nlohmann::json RelayJsonValue(const RelaySnapshot& relay) {
  nlohmann::json apps = nlohmann::json::array();
  for (const RelayAppFigures& f : relay.apps) {
    nlohmann::json refused = nlohmann::json::object();
    for (const auto& [status, n] : f.refused) refused[std::to_string(status)] = n;
    nlohmann::json app = {{"app", f.app},
                          {"service", f.service},
                          {"target", f.target},
                          {"accepted", f.accepted},
                          {"forwarded", f.forwarded},
                          {"retried", f.retried},
                          {"dead", f.dead},
                          {"gone", f.gone},
                          {"unsubscribes", f.unsubscribes},
                          {"refused", std::move(refused)},
                          {"reasons", f.reasons}};
    if (auto mean = f.mean_latency_ms()) app["forward_latency_mean_ms"] = *mean;
    if (!f.stopped_reason.empty()) {
      app["stopped"] = {{"reason", f.stopped_reason}};
      if (f.stopped_until) app["stopped"]["until"] = FormatRfc3339(*f.stopped_until);
    }
    apps.push_back(std::move(app));
  }
  return {{"listen", relay.listen}, {"apps", std::move(apps)}};
}

}  // namespace bulkhead
