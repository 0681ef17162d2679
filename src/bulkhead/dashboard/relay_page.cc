#include "bulkhead/dashboard/relay_page.h"

#include <cstdio>

#include "bulkhead/dashboard/html.h"

namespace bulkhead::dashboard {
namespace {

std::string Num(uint64_t n) { return "<td class=\"num\">" + std::to_string(n) + "</td>"; }

std::string Refused(const std::map<int, uint64_t>& refused) {
  if (refused.empty()) return "<td class=\"num\">0</td>";
  std::string text;
  for (const auto& [status, n] : refused) {
    if (!text.empty()) text += ", ";
    text += std::to_string(n) + "×" + std::to_string(status);
  }
  return "<td class=\"num\">" + Escape(text) + "</td>";
}

std::string Latency(const RelayAppFigures& f) {
  auto mean = f.mean_latency_ms();
  if (!mean) return "<td class=\"num\"><span class=\"muted\">—</span></td>";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f ms", *mean);
  return std::string("<td class=\"num\">") + buf + "</td>";
}

std::string State(const RelayAppFigures& f, TimePoint now) {
  if (f.stopped_reason.empty()) return "<td><span class=\"good\">forwarding</span></td>";
  std::string h = "<td><span class=\"bad\">stopped: " + Escape(f.stopped_reason) + "</span>";
  if (f.stopped_until) h += " — tries again " + TimeTag(*f.stopped_until, now);
  return h + "</td>";
}

std::string Apps(const RelaySnapshot& relay, TimePoint now) {
  std::string h =
      "<div class=\"table-wrap\"><table id=\"relay-apps\"><thead><tr><th>App</th>"
      "<th>Service</th><th>Topic / project</th><th>State</th><th class=\"num\">Accepted</th>"
      "<th class=\"num\">Forwarded</th><th class=\"num\">Retried</th><th class=\"num\">Dead</th>"
      "<th class=\"num\">Gone</th><th class=\"num\">Unsubscribes</th>"
      "<th class=\"num\">Refused</th><th class=\"num\">Mean forward</th></tr></thead><tbody>";
  for (const RelayAppFigures& f : relay.apps) {
    h += "<tr data-app=\"" + Escape(f.app) + "\"><td>" + Escape(f.app) + "</td><td>" +
         (f.service == "apns" ? "APNs" : "FCM") + "</td><td><code>" + Escape(f.target) +
         "</code></td>" + State(f, now) + Num(f.accepted) + Num(f.forwarded) + Num(f.retried) +
         Num(f.dead) + Num(f.gone) + Num(f.unsubscribes) + Refused(f.refused) + Latency(f) +
         "</tr>";
  }
  return h + "</tbody></table></div>";
}

std::string Reasons(const RelaySnapshot& relay) {
  std::string rows;
  for (const RelayAppFigures& f : relay.apps) {
    for (const auto& [reason, n] : f.reasons) {
      rows += "<tr><td>" + Escape(f.app) + "</td><td><code>" + Escape(reason) + "</code></td>" +
              Num(n) + "</tr>";
    }
  }
  if (rows.empty()) {
    return "<p class=\"muted\" id=\"no-relay-reasons\">APNs and FCM have refused nothing.</p>";
  }
  return "<div class=\"table-wrap\"><table id=\"relay-reasons\"><thead><tr><th>App</th>"
         "<th>Reason</th><th class=\"num\">Answers</th></tr></thead><tbody>" +
         rows + "</tbody></table></div>";
}

}  // namespace

std::string RenderRelayPage(const PageContext& ctx, const std::optional<RelaySnapshot>& relay) {
  std::string h;
  if (!relay) {
    h = "<p class=\"muted\" id=\"no-relay\">No push relay: relay_listen is empty "
        "(docs/relay.md).</p>";
  } else {
    h = "<p>Relay on <code>" + Escape(relay->listen) +
        "</code>. Each app is a delivery "
        "compartment of its own (<code>apns:NAME</code>, <code>fcm:NAME</code> on the Hosts "
        "page).</p>";
    h += "<h2>Apps</h2>" + Apps(*relay, ctx.now);
    h += "<h2>What APNs and FCM answered</h2>" + Reasons(*relay);
  }
  return RenderLayout(ctx, "/relay", "Relay", h);
}

}  // namespace bulkhead::dashboard
