#include "bulkhead/dashboard/job_list_page.h"

#include "bulkhead/dashboard/html.h"
#include "bulkhead/dashboard/job_fields.h"
#include "bulkhead/util/utf8_cut.h"

namespace bulkhead::dashboard {
namespace {

constexpr SetPage kPages[] = {{JobState::kScheduled, "/scheduled", "Scheduled"},
                              {JobState::kRetry, "/retries", "Retries"},
                              {JobState::kDead, "/dead", "Dead"},
                              {JobState::kWorking, "/busy", "Busy"}};

std::string FilterForm(const PageContext& ctx, const SetPage& page, const JobListQuery& q) {
  auto input = [](const char* name, const char* label, const std::string& value) {
    return std::string("<input type=\"text\" name=\"") + name + "\" placeholder=\"" + label +
           "\" aria-label=\"" + label + "\" value=\"" + Escape(value) + "\">";
  };
  return "<form method=\"get\" class=\"filters\" action=\"" + Escape(ctx.base) + page.path + "\">" +
         input("queue", "queue", q.queue) + input("jobtype", "jobtype", q.jobtype) +
         input("q", "args or error contains", q.contains) +
         "<button type=\"submit\">Filter</button></form>";
}

std::string QueryString(const JobListQuery& q, size_t offset) {
  std::string s = "?offset=" + std::to_string(offset);
  if (!q.queue.empty()) s += "&amp;queue=" + UrlEncode(q.queue);
  if (!q.jobtype.empty()) s += "&amp;jobtype=" + UrlEncode(q.jobtype);
  if (!q.contains.empty()) s += "&amp;q=" + UrlEncode(q.contains);
  return s;
}

}  // namespace

const SetPage* FindSetPage(std::string_view path) {
  for (const auto& p : kPages) {
    if (path == p.path && p.set != JobState::kWorking) return &p;
  }
  return nullptr;
}

const SetPage& SetPageOf(JobState set) {
  for (const auto& p : kPages) {
    if (p.set == set) return p;
  }
  return kPages[2];
}

bool MatchesFilters(const JobRecord& job, const JobListQuery& q) {
  if (!q.queue.empty() && job.queue != q.queue) return false;
  if (!q.jobtype.empty() && job.jobtype != q.jobtype) return false;
  if (q.contains.empty()) return true;
  // The payload holds the args and the error as JSON text; a substring of either is in it.
  return job.payload.find(q.contains) != std::string::npos;
}

std::string SetActionButtons(JobState set) {
  std::string h;
  if (set == JobState::kDead) {
    h += "<button type=\"submit\" name=\"action\" value=\"requeue\">Re-enqueue</button>";
  } else {
    h += "<button type=\"submit\" name=\"action\" value=\"requeue\">Retry now</button>";
    h += "<button type=\"submit\" name=\"action\" value=\"kill\">Kill</button>";
  }
  h += "<button type=\"submit\" name=\"action\" value=\"delete\" class=\"danger\">Delete</button>";
  return h;
}

std::string RenderJobListPage(const PageContext& ctx, const SetPage& page, const JobListQuery& q,
                              const JobListResult& result, size_t total) {
  const std::string b = Escape(ctx.base);
  const char* when = page.set == JobState::kDead ? "Purged" : "Runs";
  std::string h = "<p><span data-live=\"" + std::string(page.path + 1) + "\">" +
                  std::to_string(total) + "</span> jobs, sorted by time.</p>";
  h += FilterForm(ctx, page, q);
  h += "<form method=\"post\" action=\"" + b + page.path + "\">" + CsrfField(ctx);
  // Where the answer returns to: this page, with its filters.
  auto back = [](const char* name, const std::string& value) {
    return std::string("<input type=\"hidden\" name=\"back_") + name + "\" value=\"" +
           Escape(value) + "\">";
  };
  h += back("offset", std::to_string(q.offset)) + back("queue", q.queue) +
       back("jobtype", q.jobtype) + back("q", q.contains);
  h += "<div class=\"actions\">" + SetActionButtons(page.set) + "</div>";
  h += "<div class=\"table-wrap\"><table id=\"jobs\"><thead><tr><th><input type=\"checkbox\" "
       "data-select-all aria-label=\"select all\"></th><th>" +
       std::string(when) +
       "</th><th>Queue</th><th>Jobtype</th><th>Args</th><th class=\"hide-narrow\">Error</th>"
       "</tr></thead><tbody>";
  for (size_t i = 0; i < result.jobs.size(); ++i) {
    const JobRecord& job = result.jobs[i];
    JobFields f = ReadJobFields(job);
    std::string href = b + "/job?jid=" + UrlEncode(job.jid);
    h += "<tr><td><input type=\"checkbox\" name=\"jid\" value=\"" + Escape(job.jid) +
         "\" aria-label=\"select " + Escape(job.jid) + "\"></td><td><a href=\"" + href + "\">" +
         TimeTag(ScoreTime(job), ctx.now) + "</a></td><td>" + Escape(job.queue) + "</td><td>" +
         Escape(job.jobtype) + "</td><td class=\"data\">" + Escape(CutUtf8(f.args, 120)) +
         "</td><td class=\"data hide-narrow\">" + Escape(CutUtf8(f.error, 120)) + "</td></tr>";
  }
  if (result.jobs.empty()) h += "<tr><td colspan=\"6\" class=\"muted\">no jobs</td></tr>";
  h += "</tbody></table></div></form><div class=\"pager\">";
  if (q.offset > 0) {
    size_t prev = q.filtered() || q.offset < q.limit ? 0 : q.offset - q.limit;
    h += "<a href=\"" + b + page.path + QueryString(q, prev) + "\" rel=\"prev\">" +
         (q.filtered() ? "First" : "Previous") + "</a>";
  }
  if (result.more) {
    h += "<a href=\"" + b + page.path + QueryString(q, result.next_offset) +
         "\" rel=\"next\">Next</a>";
  }
  if (q.filtered()) {
    h += "<span class=\"muted\">scanned " + std::to_string(result.scanned) + " jobs (at most " +
         std::to_string(kMaxScanPerRequest) + " per page)</span>";
  }
  h += "</div>";
  return RenderLayout(ctx, page.path, page.title, h);
}

}  // namespace bulkhead::dashboard
