#include "bulkhead/dashboard/throttles_page.h"

#include "bulkhead/dashboard/html.h"

namespace bulkhead::dashboard {
namespace {

std::string Num(int64_t n) { return "<td class=\"num\">" + std::to_string(n) + "</td>"; }

std::string Throttles(const std::vector<ThrottleSnapshot>& throttles) {
  if (throttles.empty()) {
    return "<p class=\"muted\" id=\"no-throttles\">No queue throttle configured.</p>";
  }
  std::string h =
      "<div class=\"table-wrap\"><table id=\"throttles\"><thead><tr><th>Queue</th><th>Kind</th>"
      "<th class=\"num\">Limit</th><th class=\"num\">In use</th>"
      "<th class=\"num\">Most per worker</th><th class=\"num\">Timeout</th></tr></thead><tbody>";
  for (const ThrottleSnapshot& t : throttles) {
    h += "<tr data-queue=\"" + Escape(t.queue) + "\"><td>" + Escape(t.queue) + "</td><td>" +
         (t.per_worker ? "per worker" : "concurrency") + "</td>" + Num(t.limit) +
         Num(static_cast<int64_t>(t.in_use));
    h += t.per_worker ? Num(static_cast<int64_t>(t.max_per_worker))
                      : "<td class=\"num\"><span class=\"muted\">—</span></td>";
    h +=
        "<td class=\"num\">" + DurationText(std::chrono::seconds(t.timeout_seconds)) + "</td></tr>";
  }
  return h + "</tbody></table></div>";
}

std::string Cron(const std::vector<CronEntrySnapshot>& cron, TimePoint now) {
  if (cron.empty()) return "<p class=\"muted\" id=\"no-cron\">No cron entry configured.</p>";
  std::string h =
      "<div class=\"table-wrap\"><table id=\"cron\"><thead><tr><th>Name</th><th>Schedule</th>"
      "<th>Next run</th><th>Last run</th><th class=\"num\">Enqueued</th>"
      "<th class=\"num\">Lost</th></tr></thead><tbody>";
  for (const CronEntrySnapshot& c : cron) {
    h += "<tr><td>" + Escape(c.name) + "</td><td><code>" + Escape(c.schedule) + "</code></td><td>" +
         TimeTag(c.next_run, now) + "</td><td>" +
         (c.last_run ? TimeTag(*c.last_run, now) : "<span class=\"muted\">never</span>") + "</td>" +
         Num(c.enqueued);
    h += c.lost > 0
             ? "<td class=\"num\"><span class=\"bad\">" + std::to_string(c.lost) + "</span></td>"
             : Num(c.lost);
    h += "</tr>";
  }
  return h + "</tbody></table></div>";
}

std::string Batches(const BatchCounts& b) {
  return "<div class=\"table-wrap\"><table id=\"batches\"><thead><tr>"
         "<th class=\"num\">Created</th><th class=\"num\">Committed</th>"
         "<th class=\"num\">Expired uncommitted</th><th class=\"num\">Succeeded</th>"
         "</tr></thead><tbody><tr>" +
         Num(b.created) + Num(b.committed) + Num(b.expired) + Num(b.succeeded) +
         "</tr></tbody></table></div>";
}

}  // namespace

std::string RenderThrottlesPage(const PageContext& ctx, const EngineSnapshot& engine) {
  std::string h = "<h2>Throttles</h2>" + Throttles(engine.throttles);
  h += "<h2>Cron</h2>" + Cron(engine.cron, ctx.now);
  h += "<h2>Batches</h2>" + Batches(engine.batches);
  return RenderLayout(ctx, "/throttles", "Throttles & cron", h);
}

}  // namespace bulkhead::dashboard
