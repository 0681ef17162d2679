#include "bulkhead/dashboard/queues_page.h"

#include <cstdio>

#include "bulkhead/dashboard/html.h"

namespace bulkhead::dashboard {

std::string RenderQueuesPage(const PageContext& ctx, const EngineSnapshot& engine) {
  const std::string b = Escape(ctx.base);
  std::string h =
      "<div class=\"table-wrap\"><table id=\"queues\"><thead><tr><th>Queue</th>"
      "<th class=\"num\">Size</th><th class=\"num\">Latency</th><th>State</th>"
      "<th>Actions</th></tr></thead><tbody>";
  for (const auto& [name, q] : engine.queues) {
    char latency[32];
    std::snprintf(latency, sizeof(latency), "%.1f s", q.latency_seconds);
    std::string link = b + "/queues/confirm?queue=" + UrlEncode(name) + "&amp;action=";
    h += "<tr data-queue=\"" + Escape(name) + "\"><td>" + Escape(name) +
         "</td><td class=\"num\" data-live=\"queue:" + Escape(name) + "\">" +
         std::to_string(q.size) + "</td><td class=\"num\">" + latency + "</td><td>" +
         (q.paused ? "<span class=\"warn\">paused</span>" : "running") + "</td><td>";
    h += "<a class=\"button\" href=\"" + link + (q.paused ? "resume\">Resume" : "pause\">Pause") +
         "</a> <a class=\"button danger\" href=\"" + link + "clear\">Clear</a></td></tr>";
  }
  if (engine.queues.empty()) h += "<tr><td colspan=\"5\" class=\"muted\">no queues</td></tr>";
  h += "</tbody></table></div>";
  return RenderLayout(ctx, "/queues", "Queues", h);
}

std::string RenderQueueConfirmPage(const PageContext& ctx, const std::string& queue,
                                   const std::string& action, size_t size) {
  std::string what = action == "clear" ? "Delete all " + std::to_string(size) + " jobs of queue " +
                                             queue + " and the queue itself?"
                     : action == "pause"
                         ? "Pause queue " + queue + "? Workers stop fetching from it."
                         : "Resume queue " + queue + "?";
  std::string h = "<p>" + Escape(what) + "</p><form method=\"post\" action=\"" + Escape(ctx.base) +
                  "/queues\" class=\"actions\">" + CsrfField(ctx) +
                  "<input type=\"hidden\" name=\"queue\" value=\"" + Escape(queue) +
                  "\"><input type=\"hidden\" name=\"action\" value=\"" + Escape(action) +
                  "\"><button type=\"submit\" class=\"danger\" id=\"confirm\">Yes, " +
                  Escape(action) + "</button><a class=\"button\" href=\"" + Escape(ctx.base) +
                  "/queues\">Cancel</a></form>";
  return RenderLayout(ctx, "/queues", "Confirm: " + action + " " + queue, h);
}

}  // namespace bulkhead::dashboard
