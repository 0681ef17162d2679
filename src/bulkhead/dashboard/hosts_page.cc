#include "bulkhead/dashboard/hosts_page.h"

#include <cstdio>
#include <string_view>

#include "bulkhead/dashboard/html.h"

namespace bulkhead::dashboard {
namespace {

std::string Ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f ms", v);
  return buf;
}

std::string OptTime(const std::optional<TimePoint>& t, TimePoint now) {
  return t ? TimeTag(*t, now) : "<span class=\"muted\">—</span>";
}

std::string PerMinuteText(const std::optional<PerMinute>& r, double PerMinute::*field) {
  if (!r) return "<span class=\"muted\">—</span>";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f/min", (*r).*field);
  return buf;
}

// The host's last error, then its time (relative, exact on hover); "—" when none. `brief`: only
// the reason's classification (up to the first ": ", e.g. "connect_error"), the whole reason (with
// the transport's message) on hover; otherwise the whole reason.
std::string LastErrorText(const HostView& h, TimePoint now, bool brief) {
  if (h.last_error.empty()) return "<span class=\"muted\">—</span>";
  const size_t cut = brief ? h.last_error.find(": ") : std::string::npos;
  std::string text = cut == std::string::npos
                         ? "<span class=\"last-error\">" + Escape(h.last_error) + "</span>"
                         : "<span class=\"last-error\" title=\"" + Escape(h.last_error) + "\">" +
                               Escape(std::string_view(h.last_error).substr(0, cut)) + "</span>";
  if (h.last_error_at) text += " " + TimeTag(*h.last_error_at, now);
  return text;
}

std::string StateClass(const HostView& h) {
  return h.unavailable ? "state-unavailable" : "state-" + h.breaker;
}

}  // namespace

std::string HostStateText(const HostView& h) {
  if (h.unavailable) return "unavailable";
  if (h.breaker == "open") return "open";
  if (h.breaker == "half_open") return "half-open";
  return "healthy";
}

std::string RenderHostsPage(const PageContext& ctx,
                            const std::optional<std::vector<HostView>>& hosts,
                            const HostRates& rates) {
  if (!hosts) {
    return RenderLayout(ctx, "/hosts", "Hosts", "<p class=\"muted\">No delivery engine.</p>");
  }
  std::string h =
      "<div class=\"table-wrap\"><table id=\"hosts\"><thead><tr><th>Host</th><th>State</th>"
      "<th>Last error</th><th class=\"num\">In flight / cap</th><th class=\"num\">Parked</th>"
      "<th class=\"num hide-narrow\">Successes</th><th class=\"num hide-narrow\">Failures</th>"
      "<th class=\"num\">Successes / min</th><th class=\"num\">Failures / min</th>"
      "<th class=\"num hide-narrow\">p50</th><th class=\"num hide-narrow\">p99</th>"
      "<th class=\"hide-narrow\">Failing since</th><th class=\"hide-narrow\">Retry-After until</th>"
      "</tr></thead><tbody>";
  for (const HostView& v : *hosts) {
    h += "<tr><td><a href=\"" + Escape(ctx.base) + "/hosts?host=" + UrlEncode(v.host) + "\">" +
         Escape(v.host) + "</a></td><td class=\"" + StateClass(v) + "\">" + HostStateText(v) +
         "</td><td>" + LastErrorText(v, ctx.now, /*brief=*/true) + "</td><td class=\"num\">" +
         std::to_string(v.in_flight) + " / " + std::to_string(v.cap) + "</td><td class=\"num\">" +
         std::to_string(v.parked) + "</td><td class=\"num hide-narrow\">" +
         std::to_string(v.successes) + "</td><td class=\"num hide-narrow\">" +
         std::to_string(v.failures) + "</td><td class=\"num\">" +
         PerMinuteText(rates.Of(v.host), &PerMinute::successes) + "</td><td class=\"num\">" +
         PerMinuteText(rates.Of(v.host), &PerMinute::failures) +
         "</td><td class=\"num hide-narrow\">" + Ms(v.latency_p50_ms) +
         "</td><td class=\"num hide-narrow\">" + Ms(v.latency_p99_ms) +
         "</td><td class=\"hide-narrow\">" + OptTime(v.failing_since, ctx.now) +
         "</td><td class=\"hide-narrow\">" + OptTime(v.retry_after_until, ctx.now) + "</td></tr>";
  }
  if (hosts->empty()) h += "<tr><td colspan=\"13\" class=\"muted\">no hosts yet</td></tr>";
  h += "</tbody></table></div><p class=\"muted\">Counters are since the server started.</p>";
  return RenderLayout(ctx, "/hosts", "Hosts", h);
}

std::string RenderHostPage(const PageContext& ctx, const std::string& name,
                           const std::optional<HostView>& host,
                           const std::vector<std::string>& parked,
                           const std::optional<PerMinute>& rate) {
  if (!host) {
    return RenderLayout(ctx, "/hosts", "Host " + name,
                        "<p class=\"error\">No host " + Escape(name) + ".</p>");
  }
  const HostView& v = *host;
  auto row = [](const char* k, const std::string& escaped) {
    return std::string("<dt>") + k + "</dt><dd>" + escaped + "</dd>";
  };
  std::string h = "<dl class=\"fields\" id=\"host\">";
  h += row("state", "<span class=\"" + StateClass(v) + "\">" + HostStateText(v) + "</span>");
  h += row("breaker",
           Escape(v.breaker) + ", opened " + std::to_string(v.breaker_openings) + " times");
  h += row("in flight / cap", std::to_string(v.in_flight) + " / " + std::to_string(v.cap));
  h += row("parked jobs", std::to_string(v.parked));
  h += row("successes", std::to_string(v.successes));
  h += row("failures", std::to_string(v.failures));
  h += row("last minute", PerMinuteText(rate, &PerMinute::successes) + " successes, " +
                              PerMinuteText(rate, &PerMinute::failures) + " failures");
  h += row("overloaded (429/503)", std::to_string(v.overloaded));
  h += row("latency p50 / p99", Ms(v.latency_p50_ms) + " / " + Ms(v.latency_p99_ms));
  h += row("failing since", OptTime(v.failing_since, ctx.now));
  h += row("Retry-After until", OptTime(v.retry_after_until, ctx.now));
  h += row("breaker open until", OptTime(v.breaker_open_until, ctx.now));
  h += row("last error", LastErrorText(v, ctx.now, /*brief=*/false));
  h += "</dl>";
  auto action = [&](const char* value, const char* label) {
    return "<form method=\"post\" class=\"inline\" action=\"" + Escape(ctx.base) + "/hosts\">" +
           CsrfField(ctx) + "<input type=\"hidden\" name=\"host\" value=\"" + Escape(name) +
           "\"><button type=\"submit\" name=\"action\" value=\"" + value + "\">" + label +
           "</button></form>";
  };
  h += "<div class=\"actions\">";
  if (v.breaker != "closed") h += action("probe", "Probe now");
  h += action("forget", "Forget failures, release parked jobs") + "</div>";
  h += "<h2>Parked jobs</h2>";
  if (parked.empty()) {
    h += "<p class=\"muted\">none</p>";
  } else {
    h += "<ul id=\"parked\">";
    for (const auto& jid : parked) {
      h += "<li><a href=\"" + Escape(ctx.base) + "/job?jid=" + UrlEncode(jid) + "\">" +
           Escape(jid) + "</a></li>";
    }
    h += "</ul>";
    if (static_cast<int64_t>(parked.size()) < v.parked) {
      h += "<p class=\"muted\">the first " + std::to_string(parked.size()) + " of " +
           std::to_string(v.parked) + "</p>";
    }
  }
  return RenderLayout(ctx, "/hosts", "Host " + name, h);
}

}  // namespace bulkhead::dashboard
