#include "bulkhead/dashboard/job_page.h"

#include "bulkhead/dashboard/html.h"
#include "bulkhead/dashboard/job_fields.h"
#include "bulkhead/dashboard/job_list_page.h"

namespace bulkhead::dashboard {
namespace {

std::string Field(const char* name, const std::string& escaped_value) {
  return std::string("<dt>") + name + "</dt><dd>" + escaped_value + "</dd>";
}

std::string JobLink(const PageContext& ctx, const JobRecord& job) {
  const SetPage& page = SetPageOf(job.state);
  return "<a href=\"" + Escape(ctx.base) + "/job?set=" + std::string(page.path + 1) +
         "&amp;jid=" + UrlEncode(job.jid) + "\">" + Escape(job.jid) + "</a> in " + page.title;
}

}  // namespace

std::string RenderJobPage(const PageContext& ctx, JobState set, const std::string& jid,
                          const std::optional<JobRecord>& job) {
  const SetPage& page = SetPageOf(set);
  if (!job) {
    return RenderLayout(ctx, page.path, "Job " + jid,
                        "<p class=\"error\">No job " + Escape(jid) + " in " + page.title +
                            " (it may have moved; the search looks at the first jobs of each "
                            "set only).</p>");
  }
  JobFields f = ReadJobFields(*job);
  std::string h = "<dl class=\"fields\">";
  h += Field("jid", Escape(job->jid));
  h += Field("set", Escape(page.title));
  h += Field("queue", Escape(job->queue));
  h += Field("jobtype", Escape(job->jobtype));
  h += Field(set == JobState::kDead      ? "purged"
             : set == JobState::kWorking ? "reserved until"
                                         : "runs",
             TimeTag(ScoreTime(*job), ctx.now));
  if (!f.created_at.empty()) h += Field("created", Escape(f.created_at));
  if (!f.enqueued_at.empty()) h += Field("enqueued", Escape(f.enqueued_at));
  if (!f.failed_at.empty()) h += Field("failed", Escape(f.failed_at));
  h += Field("retry count", std::to_string(f.retry_count) +
                                (f.retry >= 0 ? " of " + std::to_string(f.retry) : ""));
  h += "</dl><h2>Args</h2><pre id=\"args\">" + Escape(f.args) + "</pre>";
  if (!f.custom.empty()) h += "<h2>Custom</h2><pre id=\"custom\">" + Escape(f.custom) + "</pre>";
  if (!f.error.empty()) h += "<h2>Error</h2><pre id=\"error\">" + Escape(f.error) + "</pre>";
  if (!f.backtrace.empty()) {
    h += "<h2>Backtrace</h2><pre id=\"backtrace\">" + Escape(f.backtrace) + "</pre>";
  }
  if (set != JobState::kWorking) {
    h += "<form method=\"post\" action=\"" + Escape(ctx.base) + page.path +
         "\" class=\"actions\">" + CsrfField(ctx) + "<input type=\"hidden\" name=\"jid\" value=\"" +
         Escape(job->jid) + "\">" + SetActionButtons(set) + "</form>";
  }
  return RenderLayout(ctx, page.path, "Job " + jid, h);
}

std::string RenderSearchPage(const PageContext& ctx, const std::string& jid,
                             const std::vector<JobRecord>& found, const std::string& searched) {
  std::string h;
  if (found.empty()) {
    h = "<p id=\"not-found\">No job " + Escape(jid) + " found.</p>";
  } else {
    h = "<ul id=\"found\">";
    for (const auto& job : found) h += "<li>" + JobLink(ctx, job) + "</li>";
    h += "</ul>";
  }
  h += "<p class=\"muted\">Searched " + Escape(searched) + ".</p>";
  return RenderLayout(ctx, "", "Search: " + jid, h);
}

}  // namespace bulkhead::dashboard
