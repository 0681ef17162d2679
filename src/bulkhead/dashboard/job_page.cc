#include "bulkhead/dashboard/job_page.h"

#include "bulkhead/dashboard/html.h"
#include "bulkhead/dashboard/job_fields.h"
#include "bulkhead/dashboard/job_list_page.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead::dashboard {
namespace {

std::string Field(const char* name, const std::string& escaped_value) {
  return std::string("<dt>") + name + "</dt><dd>" + escaped_value + "</dd>";
}

// A stored RFC 3339 time shown relative with the exact time on hover; as stored when unreadable.
std::string StoredTime(const std::string& rfc3339, TimePoint now) {
  auto t = ParseRfc3339(rfc3339);
  return t.ok() ? TimeTag(*t, now) : Escape(rfc3339);
}

// The nav entry a job's page belongs to.
const char* NavOf(const JobRecord& job) {
  return job.state == JobState::kQueued ? "/queues" : SetPageOf(job.state).path;
}

std::string Actions(const PageContext& ctx, const JobRecord& job) {
  std::string jid_field =
      CsrfField(ctx) + "<input type=\"hidden\" name=\"jid\" value=\"" + Escape(job.jid) + "\">";
  switch (job.state) {
    case JobState::kWorking:
      return "";
    case JobState::kQueued:
      return "<form method=\"post\" action=\"" + Escape(ctx.base) + "/job\" class=\"actions\">" +
             jid_field +
             "<button type=\"submit\" name=\"action\" value=\"delete\" class=\"danger\">Delete"
             "</button></form>";
    default:
      return "<form method=\"post\" action=\"" + Escape(ctx.base) + SetPageOf(job.state).path +
             "\" class=\"actions\">" + jid_field + SetActionButtons(job.state) + "</form>";
  }
}

}  // namespace

std::string WhereText(const JobRecord& job) {
  if (job.state == JobState::kQueued) return "queue " + job.queue;
  if (job.state == JobState::kWorking) return "Busy (reserved)";
  return SetPageOf(job.state).title;
}

std::string RenderJobPage(const PageContext& ctx, const std::string& jid,
                          const std::optional<JobRecord>& job, const std::string& holder) {
  if (!job) {
    return RenderLayout(ctx, "", "Job " + jid,
                        "<p class=\"error\" id=\"not-found\">No job " + Escape(jid) +
                            ": the server does not hold it (it may have been acknowledged, "
                            "deleted or purged).</p>");
  }
  JobFields f = ReadJobFields(*job);
  std::string h = "<dl class=\"fields\">";
  h += Field("jid", Escape(job->jid));
  h += Field("where", "<span id=\"where\">" + Escape(WhereText(*job)) + "</span>");
  h += Field("queue", Escape(job->queue));
  h += Field("jobtype", Escape(job->jobtype));
  switch (job->state) {
    case JobState::kQueued:
      break;
    case JobState::kWorking:
      h += Field("held by", holder.empty() ? "<span class=\"muted\">no worker recorded</span>"
                                           : "<span class=\"data\" id=\"holder\">" +
                                                 Escape(holder) + "</span>");
      h += Field("reserved until", TimeTag(ScoreTime(*job), ctx.now));
      break;
    case JobState::kDead:
      h += Field("purged", TimeTag(ScoreTime(*job), ctx.now));
      break;
    default:
      h += Field("runs", TimeTag(ScoreTime(*job), ctx.now));
  }
  if (!f.created_at.empty()) h += Field("created", StoredTime(f.created_at, ctx.now));
  if (!f.enqueued_at.empty()) h += Field("enqueued", StoredTime(f.enqueued_at, ctx.now));
  if (!f.failed_at.empty()) h += Field("failed", StoredTime(f.failed_at, ctx.now));
  h += Field("retry count", std::to_string(f.retry_count) +
                                (f.retry >= 0 ? " of " + std::to_string(f.retry) : ""));
  h += "</dl><h2>Args</h2><pre id=\"args\">" + Escape(f.args) + "</pre>";
  if (!f.custom.empty()) h += "<h2>Custom</h2><pre id=\"custom\">" + Escape(f.custom) + "</pre>";
  if (!f.error.empty()) h += "<h2>Error</h2><pre id=\"error\">" + Escape(f.error) + "</pre>";
  if (!f.backtrace.empty()) {
    h += "<h2>Backtrace</h2><pre id=\"backtrace\">" + Escape(f.backtrace) + "</pre>";
  }
  h += Actions(ctx, *job);
  return RenderLayout(ctx, NavOf(*job), "Job " + jid, h);
}

std::string RenderSearchPage(const PageContext& ctx, const std::string& jid,
                             const std::optional<JobRecord>& found) {
  std::string h;
  if (!found) {
    h = "<p id=\"not-found\">No job " + Escape(jid) +
        " found in any queue or set, nor reserved.</p>";
  } else {
    h = "<ul id=\"found\"><li><a href=\"" + Escape(ctx.base) + "/job?jid=" + UrlEncode(found->jid) +
        "\">" + Escape(found->jid) + "</a> in " + Escape(WhereText(*found)) + "</li></ul>";
  }
  return RenderLayout(ctx, "", "Search: " + jid, h);
}

}  // namespace bulkhead::dashboard
