// Golden fragments of each page renderer, and XSS payloads in every field a job
// brings (jobtype, args, error, backtrace, queue, jid) rendered as text, never as markup or a
// link.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/dashboard/busy_page.h"
#include "bulkhead/dashboard/hosts_page.h"
#include "bulkhead/dashboard/job_list_page.h"
#include "bulkhead/dashboard/job_page.h"
#include "bulkhead/dashboard/overview_page.h"
#include "bulkhead/dashboard/queues_page.h"
#include "bulkhead/dashboard/throttles_page.h"

namespace bulkhead::dashboard {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

const TimePoint kNow = FromUnixMicros(1'700'000'000'000'000);
constexpr char kScript[] = "<script>alert(1)</script>";
constexpr char kImg[] = "\"><img src=x onerror=alert(1)>";
constexpr char kJs[] = "javascript:alert(1)";

PageContext Ctx() {
  return {.base = "/bulkhead", .csrf_token = "tok", .has_password = false, .now = kNow};
}

JobRecord EvilJob(JobState state) {
  JobRecord j;
  j.jid = std::string(kImg) + "jid";
  j.queue = kScript;
  j.jobtype = kScript;
  j.state = state;
  j.score = ToUnixMicros(kNow + 1h);
  nlohmann::json doc = {{"jid", j.jid},
                        {"jobtype", j.jobtype},
                        {"queue", j.queue},
                        {"args", {kScript, kImg, kJs}},
                        {"custom", {{"link", kJs}}},
                        {"failure",
                         {{"errtype", kScript},
                          {"message", kImg},
                          {"backtrace", {kJs, kScript}},
                          {"retry_count", 3}}}};
  j.payload = doc.dump();
  return j;
}

// No markup from the payloads survives, and no attribute starts a javascript: URL.
void ExpectInert(const std::string& html) {
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("\"javascript:")));
  EXPECT_THAT(html, Not(HasSubstr("onerror=alert(1)>")));
  EXPECT_THAT(html, Not(HasSubstr("style=")));
}

TEST(LayoutTest, NavAssetsBannerAndBasePath) {
  std::string html = RenderLayout(Ctx(), "/dead", "Dead", "<p>body</p>");
  EXPECT_THAT(html, HasSubstr("<link rel=\"stylesheet\" href=\"/bulkhead/assets/dashboard.css\">"));
  EXPECT_THAT(html, HasSubstr("<script src=\"/bulkhead/assets/dashboard.js\" defer></script>"));
  EXPECT_THAT(html,
              HasSubstr("<a href=\"/bulkhead/dead\" class=\"active\" aria-current=\"page\">"));
  EXPECT_THAT(html, HasSubstr("id=\"no-password\""));
  EXPECT_THAT(html, HasSubstr("action=\"/bulkhead/search\""));
  PageContext with_password = Ctx();
  with_password.has_password = true;
  EXPECT_THAT(RenderLayout(with_password, "/", "x", ""), Not(HasSubstr("no-password")));
  EXPECT_THAT(html, Not(HasSubstr("http://")));  // nothing external
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

TEST(JobListPageTest, RowsPagerAndActions) {
  JobListResult r;
  r.jobs = {EvilJob(JobState::kDead)};
  r.positions = {50};
  r.next_offset = 51;
  r.more = true;
  JobListQuery q{.offset = 50, .limit = 25};
  std::string html = RenderJobListPage(Ctx(), SetPageOf(JobState::kDead), q, r, 1000);
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<span data-live=\"dead\">1000</span> jobs"));
  EXPECT_THAT(html, HasSubstr("<input type=\"hidden\" name=\"csrf\" value=\"tok\">"));
  EXPECT_THAT(html, HasSubstr("value=\"requeue\">Re-enqueue</button>"));
  EXPECT_THAT(html, Not(HasSubstr("value=\"kill\"")));
  EXPECT_THAT(html, HasSubstr("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"));
  EXPECT_THAT(html, HasSubstr("href=\"/bulkhead/job?jid=%22%3E%3Cimg"));
  EXPECT_THAT(html, HasSubstr("href=\"/bulkhead/dead?offset=25\" rel=\"prev\">Previous</a>"));
  EXPECT_THAT(html, HasSubstr("href=\"/bulkhead/dead?offset=51\" rel=\"next\">Next</a>"));
  std::string retries = RenderJobListPage(Ctx(), SetPageOf(JobState::kRetry), {}, {}, 0);
  EXPECT_THAT(retries, HasSubstr("value=\"kill\">Kill</button>"));
  EXPECT_THAT(retries, HasSubstr("value=\"requeue\">Retry now</button>"));
  EXPECT_THAT(retries, HasSubstr("no jobs"));
}

TEST(JobListPageTest, FilteredPagerSaysTheScanBound) {
  JobListQuery q{.offset = 0, .limit = 25, .jobtype = "a b"};
  JobListResult r{.next_offset = 5000, .more = true, .scanned = 5000};
  std::string html = RenderJobListPage(Ctx(), SetPageOf(JobState::kRetry), q, r, 9000);
  EXPECT_THAT(html, HasSubstr("/bulkhead/retries?offset=5000&amp;jobtype=a%20b\" rel=\"next\""));
  EXPECT_THAT(html, HasSubstr("scanned 5000 jobs (at most 5000 per page)"));
  EXPECT_THAT(html, HasSubstr("<input type=\"hidden\" name=\"back_jobtype\" value=\"a b\">"));
  EXPECT_THAT(html, HasSubstr("name=\"jobtype\" placeholder=\"jobtype\" aria-label=\"jobtype\" "
                              "value=\"a b\""));
}

TEST(JobListPageTest, FiltersMatchQueueJobtypeAndSubstring) {
  JobRecord j = EvilJob(JobState::kDead);
  EXPECT_TRUE(MatchesFilters(j, {}));
  EXPECT_TRUE(MatchesFilters(j, {.queue = kScript, .contains = "onerror"}));
  EXPECT_FALSE(MatchesFilters(j, {.queue = "other"}));
  EXPECT_FALSE(MatchesFilters(j, {.jobtype = "other"}));
  EXPECT_FALSE(MatchesFilters(j, {.contains = "absent"}));
}

TEST(JobPageTest, EveryFieldEscaped) {
  std::string html = RenderJobPage(Ctx(), "j1", EvilJob(JobState::kRetry));
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<h2>Backtrace</h2><pre id=\"backtrace\">javascript:alert(1)\n"
                              "&lt;script&gt;alert(1)&lt;/script&gt;\n</pre>"));
  EXPECT_THAT(html, HasSubstr("<pre id=\"error\">&lt;script&gt;alert(1)&lt;/script&gt;: "
                              "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</pre>"));
  EXPECT_THAT(html, HasSubstr("<dt>retry count</dt><dd>3</dd>"));
  EXPECT_THAT(html, HasSubstr("&quot;link&quot;: &quot;javascript:alert(1)&quot;"));
  EXPECT_THAT(RenderJobPage(Ctx(), "<b>", std::nullopt), HasSubstr("No job &lt;b&gt;:"));
}

TEST(JobPageTest, QueuedAndReservedJobsHaveTheirOwnFieldsAndActions) {
  JobRecord queued = EvilJob(JobState::kQueued);
  std::string q = RenderJobPage(Ctx(), "j1", queued);
  ExpectInert(q);
  EXPECT_THAT(q, HasSubstr("<span id=\"where\">queue &lt;script&gt;"));
  EXPECT_THAT(q, HasSubstr("<form method=\"post\" action=\"/bulkhead/job\" class=\"actions\">"));
  EXPECT_THAT(q, HasSubstr("value=\"delete\""));
  EXPECT_THAT(q, Not(HasSubstr("value=\"kill\"")));
  JobRecord working = EvilJob(JobState::kWorking);
  std::string w = RenderJobPage(Ctx(), "j1", working, kImg);
  ExpectInert(w);
  EXPECT_THAT(w, HasSubstr("<dt>held by</dt>"));
  EXPECT_THAT(w, HasSubstr("<dt>reserved until</dt>"));
  EXPECT_THAT(w, Not(HasSubstr("method=\"post\" action")));
  std::string search = RenderSearchPage(Ctx(), "j1", queued);
  EXPECT_THAT(search, HasSubstr("/bulkhead/job?jid="));
  EXPECT_THAT(RenderSearchPage(Ctx(), "zz", std::nullopt), HasSubstr("id=\"not-found\""));
}

TEST(QueuesPageTest, ActionsGoThroughAConfirmation) {
  EngineSnapshot e;
  e.queues[kScript] = {.size = 3, .paused = true, .latency_seconds = 1.5};
  e.queues["default"] = {.size = 7};
  std::string html = RenderQueuesPage(Ctx(), e);
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<td class=\"num\" data-live=\"queue:default\">7</td>"));
  EXPECT_THAT(html, HasSubstr("href=\"/bulkhead/queues/confirm?queue=default&amp;action=pause\""));
  EXPECT_THAT(html, HasSubstr("queue=%3Cscript%3Ealert%281%29%3C%2Fscript%3E&amp;action=resume"));
  EXPECT_THAT(html,
              Not(HasSubstr("method=\"post\"")));  // GET links only: the change is on the next page
  std::string confirm = RenderQueueConfirmPage(Ctx(), kScript, "clear", 3);
  ExpectInert(confirm);
  EXPECT_THAT(confirm, HasSubstr("<form method=\"post\" action=\"/bulkhead/queues\""));
  EXPECT_THAT(confirm, HasSubstr("name=\"csrf\" value=\"tok\""));
  EXPECT_THAT(confirm, HasSubstr("Delete all 3 jobs of queue &lt;script&gt;"));
}

TEST(BusyPageTest, WorkersTheJobsTheyHoldAndTheRest) {
  BusyData d;
  d.workers["w1"] = {.wid = "w1",
                     .hostname = kScript,
                     .pid = 42,
                     .labels = {kImg},
                     .state = WorkerState::kQuiet,
                     .last_beat = kNow - 5s};
  JobRecord working = EvilJob(JobState::kWorking);
  working.reserve_for_s = 1800;
  working.score = ToUnixMicros(kNow + 1780s);  // reserved 20 s ago
  JobRecord other = working;
  other.jid = "elsewhere-1";
  JobRecord engine = working;
  engine.jid = "delivery-1";
  engine.score = ToUnixMicros(kNow + 1790s);
  d.held = {{working, "w1"}, {other, kImg}};
  d.working = {working, other, engine};
  d.working_total = 3;
  std::string html = RenderBusyPage(Ctx(), d);
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<td class=\"num hide-narrow\">42</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"worker-state\">quiet</td><td class=\"num\">1</td>"));
  EXPECT_THAT(html, HasSubstr(">5 s ago</time>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"running\"><time datetime="));
  EXPECT_THAT(html, HasSubstr(">20 s</time></td>"));
  EXPECT_THAT(html, HasSubstr("name=\"action\" value=\"terminate\""));
  // w1's section first, then the wid not connected here; the delivery job apart.
  size_t w1 = html.find("data-wid=\"w1\"");
  size_t gone = html.find("not connected to this node");
  size_t rest = html.find("Reserved jobs no worker holds (1)");
  ASSERT_NE(w1, std::string::npos);
  ASSERT_NE(gone, std::string::npos);
  ASSERT_NE(rest, std::string::npos);
  EXPECT_LT(w1, gone);
  EXPECT_LT(gone, rest);
  EXPECT_EQ(html.find("delivery-1</a>"), html.rfind("delivery-1</a>"));  // once, in the last table
  EXPECT_GT(html.find("delivery-1</a>"), rest);
  EXPECT_LT(html.rfind("elsewhere-1"), rest);
}

// With a shared store the Workers table lists the other nodes' workers too, with their node,
// and their held jobs' sections say where they are connected.
TEST(BusyPageTest, TheOtherNodesWorkersAreListedWithTheirNode) {
  BusyData d;
  d.shared_store = true;
  d.workers["w-here"] = {.wid = "w-here", .hostname = "box-a", .last_beat = kNow - 1s};
  d.elsewhere = {{kScript, {.wid = "w-idle", .hostname = "box-b", .last_beat = kNow - 3s}},
                 {"node-b", {.wid = "w-busy", .hostname = "box-b", .state = WorkerState::kQuiet}}};
  JobRecord working = EvilJob(JobState::kWorking);
  working.reserve_for_s = 1800;
  working.score = ToUnixMicros(kNow + 1780s);
  d.held = {{working, "w-busy"}};
  d.working = {working};
  d.working_total = 1;
  std::string html = RenderBusyPage(Ctx(), d);
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<span data-live=\"workers\">3</span>"));
  EXPECT_THAT(html, HasSubstr("<th>Node</th>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"data\">w-here</td><td class=\"muted\">this node</td>"));
  EXPECT_THAT(html,
              HasSubstr("<td class=\"data\">w-idle</td><td class=\"data node\">&lt;script&gt;"));
  EXPECT_THAT(html, HasSubstr("<td class=\"data\">w-busy</td><td class=\"data node\">node-b</td>"));
  EXPECT_THAT(html, HasSubstr("name=\"wid\" value=\"w-idle\""));  // its quiet/terminate
  EXPECT_THAT(html, HasSubstr("on node node-b · box-b · quiet"));
  EXPECT_THAT(html, Not(HasSubstr("not connected to this node")));
  // One node: no Node column.
  d.shared_store = false;
  d.elsewhere.clear();
  EXPECT_THAT(RenderBusyPage(Ctx(), d), Not(HasSubstr("<th>Node</th>")));
}

TEST(HostsPageTest, StatesAndFigures) {
  HostView open{.host = "bad.example",
                .in_flight = 1,
                .cap = 4,
                .breaker = "open",
                .latency_p50_ms = 12,
                .latency_p99_ms = 900,
                .successes = 5,
                .failures = 9,
                .parked = 30,
                .failing_since = kNow - 120s};
  HostView evil{.host = kScript};
  std::string html = RenderHostsPage(Ctx(), std::vector<HostView>{open, evil});
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<a href=\"/bulkhead/hosts?host=bad.example\">bad.example</a></td>"
                              "<td class=\"state-open\">open</td><td><span class=\"muted\">—</span>"
                              "</td><td class=\"num\">1 / 4</td>"
                              "<td class=\"num\">30</td>"));
  EXPECT_THAT(html, HasSubstr(">2 min ago</time>"));
  EXPECT_THAT(html, HasSubstr("state-closed\">healthy"));
  EXPECT_THAT(RenderHostsPage(Ctx(), std::nullopt), HasSubstr("No delivery engine"));
  HostRates rates;
  rates.Add(kNow - 30s, {{.host = "bad.example", .successes = 5, .failures = 9}});
  rates.Add(kNow, {{.host = "bad.example", .successes = 5, .failures = 69}});
  std::string with_rates = RenderHostsPage(Ctx(), std::vector<HostView>{open}, rates);
  EXPECT_THAT(with_rates, HasSubstr("<td class=\"num\">0/min</td><td class=\"num\">120/min</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\"><span class=\"muted\">—</span></td>"));
  EXPECT_THAT(RenderHostPage(Ctx(), "bad.example", open), HasSubstr("<dd>30</dd>"));
  std::string page = RenderHostPage(Ctx(), "bad.example", open, {kScript, "j2"});
  ExpectInert(page);
  EXPECT_THAT(page, HasSubstr("<li><a href=\"/bulkhead/job?jid=j2\">j2</a></li>"));
  EXPECT_THAT(page, HasSubstr("the first 2 of 30"));
  EXPECT_THAT(page, HasSubstr("<form method=\"post\" class=\"inline\" action=\"/bulkhead/hosts\">"
                              "<input type=\"hidden\" name=\"csrf\" value=\"tok\"><input "
                              "type=\"hidden\" name=\"host\" value=\"bad.example\"><button "
                              "type=\"submit\" name=\"action\" value=\"probe\">Probe now"));
  EXPECT_THAT(page, HasSubstr("value=\"forget\">Forget failures, release parked jobs"));
  EXPECT_THAT(RenderHostPage(Ctx(), "ok", HostView{.host = "ok"}), Not(HasSubstr("Probe now")));
}

TEST(HostsPageTest, LastErrorAndBreakerOpenUntil) {
  HostView open{.host = "bad.example",
                .breaker = "open",
                .failures = 3,
                .breaker_open_until = kNow + 5min,
                .last_error = "http 503",
                .last_error_at = kNow - 180s};
  HostView evil{.host = "evil.example", .last_error = kScript, .last_error_at = kNow - 10s};
  HostView fine{.host = "ok.example"};
  HostView refused{.host = "refused.example",
                   .last_error = "connect_error: Failed to connect to <b>",
                   .last_error_at = kNow - 1s};
  std::string html = RenderHostsPage(Ctx(), std::vector<HostView>{open, evil, fine, refused});
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<th>State</th><th>Last error</th>"));
  EXPECT_THAT(html, HasSubstr("<td><span class=\"last-error\">http 503</span> <time datetime=\""));
  EXPECT_THAT(html, HasSubstr(">3 min ago</time></td>"));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;</span>"));
  EXPECT_THAT(html, HasSubstr("ok.example</a></td><td class=\"state-closed\">healthy</td><td><span "
                              "class=\"muted\">—</span></td>"))
      << "a host without errors";
  EXPECT_THAT(html, HasSubstr("<span class=\"last-error\" title=\"connect_error: Failed to connect "
                              "to &lt;b&gt;\">connect_error</span>"))
      << "the table shows the classification, the whole reason on hover";

  std::string page = RenderHostPage(Ctx(), "bad.example", open);
  EXPECT_THAT(page, HasSubstr("<dt>breaker open until</dt><dd><time"));
  EXPECT_THAT(page, HasSubstr(">in 5 min</time></dd>"));
  EXPECT_THAT(page, HasSubstr("<dt>last error</dt><dd><span class=\"last-error\">http 503</span>"));
  EXPECT_THAT(
      RenderHostPage(Ctx(), "refused.example", refused),
      HasSubstr("<span class=\"last-error\">connect_error: Failed to connect to &lt;b&gt;"));
  std::string evil_page = RenderHostPage(Ctx(), "evil.example", evil);
  ExpectInert(evil_page);
  EXPECT_THAT(evil_page, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(RenderHostPage(Ctx(), "ok.example", fine),
              HasSubstr("<dt>breaker open until</dt><dd><span class=\"muted\">—</span></dd>"));
}

TEST(OverviewPageTest, CountsMatchTheSnapshotAndFailingHostsAreLinked) {
  InfoSnapshot info;
  info.engine.store = "sqlite";
  info.engine.processed = 1234;
  info.engine.failures = 56;
  info.engine.dead = 7;
  info.engine.retries = 8;
  info.engine.queues["default"] = {.size = 3, .latency_seconds = 2.5};
  info.hosts = std::vector<HostView>{{.host = "ok.example"},
                                     {.host = kScript, .breaker = "open", .parked = 4}};
  History history;
  std::string html = RenderOverviewPage(Ctx(), info, history, "");
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<span class=\"figure\" data-live=\"processed\">1234</span>"));
  EXPECT_THAT(html, HasSubstr("data-live=\"failures\">56</span>"));
  EXPECT_THAT(html, HasSubstr("data-live=\"dead\">7</span>"));
  EXPECT_THAT(html, HasSubstr("Store <strong>sqlite</strong>: <span class=\"good\">healthy"));
  EXPECT_THAT(html, HasSubstr("/bulkhead/hosts?host=%3Cscript%3E"));
  EXPECT_THAT(html, Not(HasSubstr("ok.example")));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">2.5 s</td>"));
  EXPECT_THAT(RenderOverviewPage(Ctx(), info, history, "store unavailable: down"),
              HasSubstr("<span class=\"bad\">store unavailable: down</span>"));
}

TEST(OverviewPageTest, TheSidekiqBridgeSectionSaysUpOrWhyNotWithItsFigures) {
  InfoSnapshot info;
  History history;
  EXPECT_THAT(RenderOverviewPage(Ctx(), info, history, ""), Not(HasSubstr("Sidekiq bridge")))
      << "off: no section";
  BridgeSnapshot b;
  b.up = false;
  b.reason = kScript;
  b.node = kImg;
  b.redis = "redis://127.0.0.1:6379/0";
  b.outcomes_queue = "default";
  b.taken = 1500;
  b.dead = 3;
  b.queues = {{kScript, 4, 1.5}};
  info.sidekiq = b;
  std::string html = RenderOverviewPage(Ctx(), info, history, "");
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<h2>Sidekiq bridge</h2>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"bad\">down: &lt;script&gt;"));
  EXPECT_THAT(html, HasSubstr("data-live=\"sidekiq-taken\">1500</span>"));
  EXPECT_THAT(html, HasSubstr("data-live=\"sidekiq-dead\">3</span>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">4</td><td class=\"num\">1.5 s</td>"));
  info.sidekiq->up = true;
  EXPECT_THAT(RenderOverviewPage(Ctx(), info, history, ""),
              HasSubstr("<p id=\"sidekiq-bridge\"><span class=\"good\">up</span>"));
}

TEST(ThrottlesPageTest, ThrottlesCronAndBatches) {
  EngineSnapshot e;
  e.throttles = {
      ThrottleSnapshot{.queue = "bulk",
                       .per_worker = true,
                       .limit = 2,
                       .timeout_seconds = 60,
                       .in_use = 5,
                       .max_per_worker = 2},
      ThrottleSnapshot{.queue = kScript, .limit = 3, .timeout_seconds = 30, .in_use = 1}};
  e.cron = {CronEntrySnapshot{.name = "FiveJob",
                              .schedule = "*/5 * * * *",
                              .next_run = kNow + 180s,
                              .last_run = kNow - 120s,
                              .enqueued = 7,
                              .lost = 1},
            CronEntrySnapshot{.name = kImg, .schedule = kScript, .next_run = kNow + 30s}};
  e.batches = BatchCounts{.created = 4, .committed = 3, .expired = 1, .succeeded = 2};
  std::string html = RenderThrottlesPage(Ctx(), e);
  ExpectInert(html);
  EXPECT_THAT(html, HasSubstr("<title>Throttles &amp; cron · bulkhead</title>"));
  EXPECT_THAT(html, HasSubstr("<a href=\"/bulkhead/throttles\" class=\"active\" "
                              "aria-current=\"page\">Throttles &amp; cron</a>"));
  EXPECT_THAT(html, HasSubstr("<tr data-queue=\"bulk\"><td>bulk</td><td>per worker</td>"
                              "<td class=\"num\">2</td><td class=\"num\">5</td>"
                              "<td class=\"num\">2</td><td class=\"num\">1 min 0 s</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><td>concurrency</td>"
                              "<td class=\"num\">3</td><td class=\"num\">1</td><td "
                              "class=\"num\"><span class=\"muted\">—</span></td><td "
                              "class=\"num\">30 s</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>FiveJob</td><td><code>*/5 * * * *</code></td><td><time "
                              "datetime=\"2023-11-14T22:16:20Z\" title=\"2023-11-14 22:16:20 "
                              "UTC\">in 3 min</time></td><td><time "
                              "datetime=\"2023-11-14T22:11:20Z\" title=\"2023-11-14 22:11:20 "
                              "UTC\">2 min ago</time></td><td class=\"num\">7</td><td "
                              "class=\"num\"><span class=\"bad\">1</span></td></tr>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"muted\">never</span></td><td class=\"num\">0</td>"
                              "<td class=\"num\">0</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<table id=\"batches\">"));
  EXPECT_THAT(html, HasSubstr("<tbody><tr><td class=\"num\">4</td><td class=\"num\">3</td>"
                              "<td class=\"num\">1</td><td class=\"num\">2</td></tr>"));
  std::string none = RenderThrottlesPage(Ctx(), EngineSnapshot{});
  EXPECT_THAT(none, HasSubstr("id=\"no-throttles\""));
  EXPECT_THAT(none, HasSubstr("id=\"no-cron\""));
  EXPECT_THAT(none, HasSubstr("<td class=\"num\">0</td><td class=\"num\">0</td>"));
}

}  // namespace
}  // namespace bulkhead::dashboard
