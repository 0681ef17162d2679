#include "bulkhead/dashboard/overview_page.h"

#include <cstdio>

#include "bulkhead/dashboard/html.h"
#include "bulkhead/dashboard/svg_chart.h"

namespace bulkhead::dashboard {
namespace {

std::string Card(const std::string& label, const std::string& live_key, int64_t value,
                 const std::string& href) {
  std::string h = "<div class=\"card\"><span class=\"figure\" data-live=\"" + Escape(live_key) +
                  "\">" + std::to_string(value) + "</span><span class=\"label\">";
  h += href.empty() ? Escape(label) : "<a href=\"" + Escape(href) + "\">" + Escape(label) + "</a>";
  return h + "</span></div>";
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}

double Retries(const HistorySample& s) { return static_cast<double>(s.retries); }
double Parked(const HistorySample& s) { return static_cast<double>(s.parked); }
double Latency(const HistorySample& s) { return s.latency_seconds; }

std::string Charts(const std::deque<HistorySample>& samples, const std::string& span) {
  std::string h = "<div class=\"charts\">";
  h += RenderSvgChart(
      "Jobs per second, " + span,
      {{"processed", History::ProcessedRate(samples)}, {"failed", History::FailureRate(samples)}},
      "/s");
  h += RenderSvgChart(
      "Retry set and parked deliveries, " + span,
      {{"retries", History::Gauge(samples, Retries)}, {"parked", History::Gauge(samples, Parked)}},
      "");
  h += RenderSvgChart("Largest queue latency, " + span,
                      {{"latency", History::Gauge(samples, Latency)}}, " s");
  return h + "</div>";
}

// The Sidekiq bridge (bridge/sidekiq_bridge.h): up or why not, its counters, the Sidekiq queues.
std::string BridgeSection(const BridgeSnapshot& k) {
  std::string h = "<h2>Sidekiq bridge</h2><p id=\"sidekiq-bridge\">";
  h += k.up ? "<span class=\"good\">up</span>"
            : "<span class=\"bad\">down: " + Escape(k.reason) + "</span>";
  h += " · node <strong>" + Escape(k.node) + "</strong> · " + Escape(k.redis) +
       " · outcome jobs to <code>queue:" + Escape(k.outcomes_queue) + "</code></p>";
  h += "<div class=\"cards\">";
  h += Card("taken", "sidekiq-taken", k.taken, "");
  h += Card("repeats", "sidekiq-repeats", k.repeats, "");
  h += Card("to Sidekiq's dead set", "sidekiq-dead", k.dead, "");
  h += Card("in progress", "sidekiq-in-progress", k.in_progress, "");
  h += Card("outcomes written", "sidekiq-outcomes-written", k.outcomes_written, "");
  h += Card("outcomes waiting", "sidekiq-outcomes-waiting", k.outcomes_waiting, "");
  h += "</div><div class=\"table-wrap\"><table id=\"sidekiq-queues\"><thead><tr><th>Sidekiq "
       "queue</th><th class=\"num\">Size</th><th class=\"num\">Latency</th></tr></thead><tbody>";
  for (const SidekiqQueueFigures& q : k.queues) {
    h += "<tr><td>" + Escape(q.name) + "</td><td class=\"num\">" + std::to_string(q.size) +
         "</td><td class=\"num\">" + Seconds(q.latency_seconds) + "</td></tr>";
  }
  if (k.queues.empty()) h += "<tr><td colspan=\"3\" class=\"muted\">not read yet</td></tr>";
  return h + "</tbody></table></div>";
}

}  // namespace

bool HostIsFailing(const HostView& h) {
  return h.breaker != "closed" || h.unavailable || h.failing_since.has_value();
}

std::string RenderOverviewPage(const PageContext& ctx, const InfoSnapshot& info,
                               const History& history, const std::string& store_problem) {
  const EngineSnapshot& e = info.engine;
  const std::string& b = ctx.base;
  std::string h;
  h += "<p>Store <strong>" + Escape(e.store) + "</strong>: ";
  h += store_problem.empty() ? "<span class=\"good\">healthy</span>"
                             : "<span class=\"bad\">" + Escape(store_problem) + "</span>";
  h += " · up since " + TimeTag(e.started_at, ctx.now) + "</p>";
  h += "<div class=\"cards\">";
  h += Card("processed", "processed", e.processed, "");
  h += Card("failed", "failures", e.failures, "");
  h += Card("enqueued", "enqueued", static_cast<int64_t>(e.enqueued), b + "/queues");
  h += Card("queues", "queues", static_cast<int64_t>(e.queues.size()), b + "/queues");
  h += Card("busy", "working", static_cast<int64_t>(e.working), b + "/busy");
  h += Card("workers", "workers", static_cast<int64_t>(e.worker_count), b + "/busy");
  h += Card("scheduled", "scheduled", static_cast<int64_t>(e.scheduled), b + "/scheduled");
  h += Card("retries", "retries", static_cast<int64_t>(e.retries), b + "/retries");
  h += Card("dead", "dead", static_cast<int64_t>(e.dead), b + "/dead");
  h += "</div>";

  h += "<h2>Failing hosts</h2>";
  std::string failing;
  if (info.hosts) {
    for (const HostView& host : *info.hosts) {
      if (!HostIsFailing(host)) continue;
      failing += "<li><a href=\"" + Escape(b) + "/hosts?host=" + UrlEncode(host.host) + "\">" +
                 Escape(host.host) + "</a> <span class=\"state-" + Escape(host.breaker) + "\">" +
                 Escape(host.unavailable ? "unavailable" : host.breaker) + "</span>, " +
                 std::to_string(host.parked) + " parked, " + std::to_string(host.failures) +
                 " failures</li>";
    }
  }
  h += failing.empty() ? "<p class=\"muted\" id=\"no-failing-hosts\">none</p>"
                       : "<ul id=\"failing-hosts\">" + failing + "</ul>";

  if (info.sidekiq) h += BridgeSection(*info.sidekiq);

  h += "<h2>Last 5 minutes</h2>" + Charts(history.seconds(), "last 5 min");
  h += "<h2>Last 4 hours</h2>" + Charts(history.minutes(), "last 4 h");

  h += "<h2>Queue latency</h2><div class=\"table-wrap\"><table><thead><tr><th>Queue</th>"
       "<th class=\"num\">Size</th><th class=\"num\">Latency</th></tr></thead><tbody>";
  for (const auto& [name, q] : e.queues) {
    h += "<tr><td>" + Escape(name) + "</td><td class=\"num\">" + std::to_string(q.size) +
         "</td><td class=\"num\">" + Seconds(q.latency_seconds) + "</td></tr>";
  }
  if (e.queues.empty()) h += "<tr><td colspan=\"3\" class=\"muted\">no queues</td></tr>";
  h += "</tbody></table></div>";
  return RenderLayout(ctx, "/", "Overview", h);
}

}  // namespace bulkhead::dashboard
