#include "bulkhead/dashboard/busy_page.h"

#include "bulkhead/dashboard/html.h"
#include "bulkhead/dashboard/job_fields.h"

namespace bulkhead::dashboard {
namespace {

std::string WorkerForm(const PageContext& ctx, const std::string& wid, const char* action,
                       const char* label) {
  return "<form method=\"post\" class=\"inline\" action=\"" + Escape(ctx.base) + "/busy\">" +
         CsrfField(ctx) + "<input type=\"hidden\" name=\"wid\" value=\"" + Escape(wid) +
         "\"><input type=\"hidden\" name=\"action\" value=\"" + action +
         "\"><button type=\"submit\">" + label + "</button></form>";
}

}  // namespace

std::string RenderBusyPage(const PageContext& ctx, const std::map<std::string, WorkerInfo>& workers,
                           const std::vector<JobRecord>& working, size_t working_total) {
  std::string h = "<h2>Workers (<span data-live=\"workers\">" + std::to_string(workers.size()) +
                  "</span>)</h2>";
  h += "<div class=\"actions\">" + WorkerForm(ctx, "", "quiet", "Quiet all") + "</div>";
  h += "<div class=\"table-wrap\"><table id=\"workers\"><thead><tr><th>wid</th><th>Host</th>"
       "<th class=\"num\">pid</th><th>Labels</th><th>Last beat</th><th>State</th><th>Actions</th>"
       "</tr></thead><tbody>";
  for (const auto& [wid, w] : workers) {
    std::string labels;
    for (const auto& l : w.labels) labels += (labels.empty() ? "" : ", ") + Escape(l);
    h += "<tr><td class=\"data\">" + Escape(wid) + "</td><td>" + Escape(w.hostname) +
         "</td><td class=\"num\">" + std::to_string(w.pid) + "</td><td>" + labels + "</td><td>" +
         TimeTag(w.last_beat, ctx.now) + "</td><td class=\"worker-state\">" +
         WorkerStateName(w.state) + "</td><td>" + WorkerForm(ctx, wid, "quiet", "Quiet") + " " +
         WorkerForm(ctx, wid, "terminate", "Terminate") + "</td></tr>";
  }
  if (workers.empty()) h += "<tr><td colspan=\"7\" class=\"muted\">no workers</td></tr>";
  h += "</tbody></table></div>";
  h += "<h2>Reserved jobs (<span data-live=\"working\">" + std::to_string(working_total) +
       "</span>)</h2>";
  h += "<div class=\"table-wrap\"><table id=\"working\"><thead><tr><th>jid</th><th>Queue</th>"
       "<th>Jobtype</th><th>Running for</th><th>Reserved until</th></tr></thead><tbody>";
  for (const auto& job : working) {
    TimePoint until = ScoreTime(job);
    TimePoint since = until - std::chrono::seconds(job.reserve_for_s);
    h += "<tr><td class=\"data\"><a href=\"" + Escape(ctx.base) +
         "/job?set=busy&amp;jid=" + UrlEncode(job.jid) + "\">" + Escape(job.jid) + "</a></td><td>" +
         Escape(job.queue) + "</td><td>" + Escape(job.jobtype) + "</td><td>" +
         DurationText(ctx.now - since) + "</td><td>" + TimeTag(until, ctx.now) + "</td></tr>";
  }
  if (working.empty()) h += "<tr><td colspan=\"5\" class=\"muted\">no reserved jobs</td></tr>";
  if (working.size() < working_total) {
    h += "<tr><td colspan=\"5\" class=\"muted\">showing the first " +
         std::to_string(working.size()) + "</td></tr>";
  }
  h += "</tbody></table></div>";
  return RenderLayout(ctx, "/busy", "Busy", h);
}

}  // namespace bulkhead::dashboard
