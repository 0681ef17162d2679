#include "bulkhead/dashboard/busy_page.h"

#include <algorithm>
#include <set>

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

std::string JobCell(const PageContext& ctx, const JobRecord& job) {
  return "<td class=\"data jid\"><a href=\"" + Escape(ctx.base) + "/job?jid=" + UrlEncode(job.jid) +
         "\">" + Escape(job.jid) + "</a></td>";
}

// jid, jobtype, queue, running for (started on hover), reserved until.
std::string JobCells(const PageContext& ctx, const JobRecord& job) {
  TimePoint since = ReservedSince(job);
  return JobCell(ctx, job) + "<td>" + Escape(job.jobtype) + "</td><td>" + Escape(job.queue) +
         "</td><td class=\"running\">" + TimeTagText(since, DurationText(ctx.now - since)) +
         "</td><td class=\"hide-narrow\">" + TimeTag(ScoreTime(job), ctx.now) + "</td>";
}

constexpr char kJobHead[] =
    "<th>jid</th><th>Jobtype</th><th>Queue</th><th>Running for</th>"
    "<th class=\"hide-narrow\">Reserved until</th>";

// One row of the Workers table; `node` is shown when the store is shared ("" for this node).
std::string WorkerRow(const PageContext& ctx, const BusyData& d, const std::string& node,
                      const WorkerInfo& w, size_t held) {
  std::string labels;
  for (const auto& l : w.labels) labels += (labels.empty() ? "" : ", ") + Escape(l);
  std::string h = "<tr><td class=\"data\">" + Escape(w.wid) + "</td>";
  if (d.shared_store) {
    h += node.empty() ? "<td class=\"muted\">this node</td>"
                      : "<td class=\"data node\">" + Escape(node) + "</td>";
  }
  return h + "<td>" + Escape(w.hostname) + "</td><td class=\"num hide-narrow\">" +
         std::to_string(w.pid) + "</td><td class=\"hide-narrow\">" + labels + "</td><td>" +
         TimeTag(w.last_beat, ctx.now) + "</td><td class=\"worker-state\">" +
         WorkerStateName(w.state) + "</td><td class=\"num\">" + std::to_string(held) + "</td><td>" +
         WorkerForm(ctx, w.wid, "quiet", "Quiet") + " " +
         WorkerForm(ctx, w.wid, "terminate", "Terminate") + "</td></tr>";
}

// This node's workers, then the other nodes' (shared store).
std::string WorkersTable(const PageContext& ctx, const BusyData& d,
                         const std::map<std::string, size_t>& held_by) {
  auto held = [&held_by](const std::string& wid) {
    auto n = held_by.find(wid);
    return n == held_by.end() ? size_t{0} : n->second;
  };
  std::string h = "<h2>Workers (<span data-live=\"workers\">" +
                  std::to_string(d.workers.size() + d.elsewhere.size()) + "</span>)</h2>";
  h += "<div class=\"actions\">" + WorkerForm(ctx, "", "quiet", "Quiet all") + "</div>";
  h += "<div class=\"table-wrap\"><table id=\"workers\"><thead><tr><th>wid</th>";
  if (d.shared_store) h += "<th>Node</th>";
  h += "<th>Host</th><th class=\"num hide-narrow\">pid</th><th class=\"hide-narrow\">Labels</th>"
       "<th>Last beat</th><th>State</th><th class=\"num\">Jobs</th><th>Actions</th></tr></thead>"
       "<tbody>";
  for (const auto& [wid, w] : d.workers) h += WorkerRow(ctx, d, "", w, held(wid));
  for (const NodeWorker& nw : d.elsewhere) {
    h += WorkerRow(ctx, d, nw.node, nw.info, held(nw.info.wid));
  }
  if (d.workers.empty() && d.elsewhere.empty()) {
    h += "<tr><td colspan=\"9\" class=\"muted\">no workers</td></tr>";
  }
  return h + "</tbody></table></div>";
}

// One section per wid holding jobs: this node's workers first (by wid), then the others.
std::string HeldTables(const PageContext& ctx, const BusyData& d) {
  std::vector<const HolderStore::HeldJob*> held;
  for (const auto& hj : d.held) held.push_back(&hj);
  std::sort(held.begin(), held.end(),
            [&](const HolderStore::HeldJob* a, const HolderStore::HeldJob* b) {
              bool a_here = d.workers.contains(a->wid), b_here = d.workers.contains(b->wid);
              if (a_here != b_here) return a_here;
              if (a->wid != b->wid) return a->wid < b->wid;
              return ReservedSince(a->job) < ReservedSince(b->job);
            });
  std::string h = "<h2>Jobs held by workers (" + std::to_string(d.held.size()) + ")</h2>";
  if (held.empty()) return h + "<p class=\"muted\" id=\"no-held\">no worker holds a job</p>";
  for (size_t i = 0; i < held.size();) {
    const std::string& wid = held[i]->wid;
    auto w = d.workers.find(wid);
    auto there = std::find_if(d.elsewhere.begin(), d.elsewhere.end(),
                              [&wid](const NodeWorker& nw) { return nw.info.wid == wid; });
    h += "<section class=\"held\" data-wid=\"" + Escape(wid) + "\"><h3><span class=\"data\">" +
         Escape(wid) + "</span> ";
    if (w != d.workers.end()) {
      h += "<span class=\"muted\">" + Escape(w->second.hostname) + " · " +
           WorkerStateName(w->second.state) + "</span>";
    } else if (there != d.elsewhere.end()) {
      h += "<span class=\"muted\">on node " + Escape(there->node) + " · " +
           Escape(there->info.hostname) + " · " + WorkerStateName(there->info.state) + "</span>";
    } else {
      h += "<span class=\"muted\">not connected to this node (gone, or connected to another "
           "node since its last heartbeat)</span>";
    }
    if (w == d.workers.end() && d.shared_store) {  // sent to the other nodes (Engine::SignalWorker)
      h += " " + WorkerForm(ctx, wid, "quiet", "Quiet") + " " +
           WorkerForm(ctx, wid, "terminate", "Terminate");
    }
    h += "</h3><div class=\"table-wrap\"><table class=\"held-jobs\"><thead><tr>" +
         std::string(kJobHead) + "</tr></thead><tbody>";
    for (; i < held.size() && held[i]->wid == wid; ++i) {
      h += "<tr>" + JobCells(ctx, held[i]->job) + "</tr>";
    }
    h += "</tbody></table></div></section>";
  }
  if (d.held_truncated) {
    h += "<p class=\"muted\">showing the first " + std::to_string(held.size()) + "</p>";
  }
  return h;
}

// The reserved jobs among the first listed that no worker holds.
std::string UnheldTable(const PageContext& ctx, const BusyData& d) {
  std::set<std::string> held;
  for (const auto& hj : d.held) held.insert(hj.job.jid);
  size_t others = d.working_total > d.held.size() ? d.working_total - d.held.size() : 0;
  std::string h = "<h2>Reserved jobs no worker holds (" + std::to_string(others) +
                  ")</h2><p class=\"muted\">The delivery engine's, or reserved by a worker "
                  "whose FETCH recorded no holder.</p>";
  h += "<div class=\"table-wrap\"><table id=\"working\"><thead><tr>" + std::string(kJobHead) +
       "</tr></thead><tbody>";
  size_t shown = 0;
  for (const auto& job : d.working) {
    if (held.contains(job.jid)) continue;
    h += "<tr>" + JobCells(ctx, job) + "</tr>";
    ++shown;
  }
  if (shown == 0) h += "<tr><td colspan=\"5\" class=\"muted\">none</td></tr>";
  if (shown < others) {
    h += "<tr><td colspan=\"5\" class=\"muted\">showing " + std::to_string(shown) + " of " +
         std::to_string(others) + " (those whose reservation ends first)</td></tr>";
  }
  return h + "</tbody></table></div>";
}

}  // namespace

TimePoint ReservedSince(const JobRecord& job) {
  return ScoreTime(job) - std::chrono::seconds(job.reserve_for_s);
}

std::string RenderBusyPage(const PageContext& ctx, const BusyData& data) {
  std::map<std::string, size_t> held_by;
  for (const auto& hj : data.held) ++held_by[hj.wid];
  std::string h = WorkersTable(ctx, data, held_by);
  h += HeldTables(ctx, data);
  h += "<p class=\"muted\">Reserved jobs in all: <span data-live=\"working\">" +
       std::to_string(data.working_total) + "</span>.</p>";
  h += UnheldTable(ctx, data);
  return RenderLayout(ctx, "/busy", "Busy", h);
}

}  // namespace bulkhead::dashboard
