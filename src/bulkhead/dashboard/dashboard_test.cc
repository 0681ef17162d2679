// The dashboard's request handling over a real engine on a memory store, answering inline and
// (DeferredStore) on a later turn of the loop: authentication, CSRF, security headers, paging and
// each action changing the state the engine then reports.
#include "bulkhead/dashboard/dashboard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/post.hpp>

#include "bulkhead/dashboard/basic_auth.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/util/base64.h"
#include "bulkhead/util/simulated_clock.h"

namespace bulkhead::dashboard {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

class DashboardTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUpDashboard(std::string password, std::string base = "") {
    inner_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    if (GetParam()) {
      deferred_ = std::make_unique<DeferredStore>(
          *inner_, [this](std::function<void()> f) { boost::asio::post(io_, std::move(f)); });
    }
    engine_ = std::make_unique<Engine>(io_, store(), config_, clock_, rng_);
    password_ = password;
    dashboard_ = std::make_unique<Dashboard>(
        io_, *engine_, DashboardOptions{.base_path = base, .password = password},
        DashboardSources{.snapshot =
                             [this](std::function<void(Result<InfoSnapshot>)> cb) {
                               engine_->Snapshot([cb](Result<EngineSnapshot> e) {
                                 if (!e.ok()) return cb(e.status());
                                 InfoSnapshot info;
                                 info.engine = *e;
                                 info.hosts = std::vector<HostView>{};
                                 cb(info);
                               });
                             },
                         .hosts = [] { return std::optional<std::vector<HostView>>(); },
                         .host_action =
                             [this](const std::string& host, const std::string& action) {
                               host_actions_.push_back(action + " " + host);
                               return host == "known" ? Status::Ok()
                                                      : Status::NotFound("no host " + host);
                             },
                         .store_problem = [] { return std::string(); }});
  }
  Store& store() { return deferred_ ? static_cast<Store&>(*deferred_) : *inner_; }
  void RunReady() {
    io_.restart();
    io_.poll();
  }
  std::string Auth() const {
    return password_.empty() ? "" : "Basic " + Base64Encode("admin:" + password_);
  }
  HttpResponseOut Request(std::string method, std::string target, std::string body = "",
                          std::map<std::string, std::string> headers = {}) {
    HttpRequestIn req;
    req.method = std::move(method);
    size_t q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) req.query = target.substr(q + 1);
    req.body = std::move(body);
    req.headers = std::move(headers);
    if (!req.headers.count("authorization") && !Auth().empty()) {
      req.headers["authorization"] = Auth();
    }
    std::optional<HttpResponseOut> out;
    dashboard_->Handle(req, [&](HttpResponseOut r) { out = std::move(r); });
    RunReady();
    EXPECT_TRUE(out.has_value()) << target << " never answered";
    return out.value_or(HttpResponseOut{});
  }
  HttpResponseOut Get(const std::string& target) { return Request("GET", target); }
  // A POST carrying the CSRF token of this principal.
  HttpResponseOut Post(const std::string& target, const std::string& fields) {
    return Request(
        "POST", target,
        "csrf=" + dashboard_->csrf().TokenFor(Auth()) + (fields.empty() ? "" : "&") + fields);
  }
  static std::string HeaderOf(const HttpResponseOut& r, const std::string& name) {
    for (const auto& [k, v] : r.headers) {
      if (k == name) return v;
    }
    return "";
  }
  // A job put straight into `state` (dead, retry, scheduled) with `score`.
  void PutJob(const std::string& jid, JobState state, int64_t score,
              const std::string& queue = "default") {
    JobRecord j = MakeJob(jid, queue, JobState::kScheduled, score);
    store().Push(j, [](Status s) { ASSERT_TRUE(s.ok()) << s.message(); });
    j.state = state;
    store().Move(j, clock_.Now(), [](Status s) { ASSERT_TRUE(s.ok()) << s.message(); });
    RunReady();
  }
  EngineSnapshot Snapshot() {
    std::optional<Result<EngineSnapshot>> out;
    engine_->Snapshot([&](Result<EngineSnapshot> r) { out = std::move(r); });
    RunReady();
    return out && out->ok() ? **out : EngineSnapshot{};
  }
  int64_t Future(int i) { return ToUnixMicros(clock_.Now() + std::chrono::hours(1)) + i; }

  Config config_;
  SimulatedClock clock_;
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> inner_;
  std::unique_ptr<DeferredStore> deferred_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Dashboard> dashboard_;
  std::string password_;
  std::vector<std::string> host_actions_;
};

INSTANTIATE_TEST_SUITE_P(Answers, DashboardTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

TEST_P(DashboardTest, WithAPasswordNothingIsReachableWithoutIt) {
  SetUpDashboard("s3cret");
  for (std::string path : {"/", "/queues", "/busy", "/dead", "/retries", "/scheduled", "/hosts",
                           "/throttles", "/job?jid=x", "/search?jid=x", "/live.json",
                           "/assets/dashboard.js", "/assets/dashboard.css"}) {
    for (std::string auth :
         std::vector<std::string>{"", "Basic " + Base64Encode("admin:wrong"), "Bearer s3cret"}) {
      HttpResponseOut r = Request("GET", path, "", {{"authorization", auth}});
      EXPECT_EQ(r.status, 401) << path << " with '" << auth << "'";
      EXPECT_EQ(HeaderOf(r, "WWW-Authenticate"), kBasicChallenge);
    }
    EXPECT_EQ(Get(path).status, path.rfind("/job", 0) == 0 ? 404 : 200) << path;
  }
  PutJob("d1", JobState::kDead, Future(1));
  HttpResponseOut r = Request("POST", "/dead", "action=delete&jid=d1", {{"authorization", ""}});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Snapshot().dead, 1u);
  EXPECT_THAT(Get("/").body, Not(HasSubstr("no-password")));
}

TEST_P(DashboardTest, EveryResponseCarriesTheSecurityHeaders) {
  SetUpDashboard("");
  for (std::string path : {"/", "/queues", "/dead", "/nowhere", "/assets/dashboard.js"}) {
    HttpResponseOut r = Get(path);
    EXPECT_EQ(HeaderOf(r, "Content-Security-Policy"), kContentSecurityPolicy) << path;
    EXPECT_EQ(HeaderOf(r, "X-Frame-Options"), "DENY") << path;
    EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff") << path;
  }
  EXPECT_THAT(std::string(kContentSecurityPolicy), Not(HasSubstr("unsafe")));
  EXPECT_THAT(Get("/").body, HasSubstr("id=\"no-password\""));
  EXPECT_EQ(Get("/nowhere").status, 404);
  EXPECT_EQ(Request("DELETE", "/dead").status, 405);
}

TEST_P(DashboardTest, APostWithoutTheRightTokenIsRefused) {
  SetUpDashboard("s3cret");
  PutJob("d1", JobState::kDead, Future(1));
  EXPECT_EQ(Request("POST", "/dead", "action=delete&jid=d1").status, 403);
  EXPECT_EQ(Request("POST", "/dead", "csrf=0000&action=delete&jid=d1").status, 403);
  std::string other_principal = CsrfGuard().TokenFor(Auth());
  EXPECT_EQ(Request("POST", "/dead", "csrf=" + other_principal + "&action=delete&jid=d1").status,
            403);
  std::string token = dashboard_->csrf().TokenFor(Auth());
  EXPECT_EQ(Request("POST", "/dead", "csrf=" + token + "&action=delete&jid=d1",
                    {{"sec-fetch-site", "cross-site"}})
                .status,
            403);
  EXPECT_EQ(Snapshot().dead, 1u);
  // GET never changes state, whatever it carries.
  EXPECT_EQ(Get("/dead?csrf=" + token + "&action=delete&jid=d1").status, 200);
  EXPECT_EQ(Snapshot().dead, 1u);
  HttpResponseOut ok = Post("/dead", "action=delete&jid=d1");
  EXPECT_EQ(ok.status, 303);
  EXPECT_EQ(HeaderOf(ok, "Location"), "/dead?msg=delete");
  EXPECT_EQ(Snapshot().dead, 0u);
}

TEST_P(DashboardTest, SetActionsGoThroughTheEngine) {
  SetUpDashboard("");
  PutJob("d1", JobState::kDead, Future(1));
  PutJob("d2", JobState::kDead, Future(2));
  PutJob("r1", JobState::kRetry, Future(3));
  PutJob("r2", JobState::kRetry, Future(4));
  PutJob("s1", JobState::kScheduled, Future(5));
  EXPECT_EQ(Post("/dead", "action=requeue&jid=d1").status, 303);
  EXPECT_EQ(Post("/retries", "action=kill&jid=r1").status, 303);
  EXPECT_EQ(Post("/retries", "action=requeue&jid=r2").status, 303);
  EXPECT_EQ(Post("/scheduled", "action=delete&jid=s1").status, 303);
  EngineSnapshot e = Snapshot();
  EXPECT_EQ(e.dead, 2u);  // d2 and r1
  EXPECT_EQ(e.retries, 0u);
  EXPECT_EQ(e.scheduled, 0u);
  EXPECT_EQ(e.queues["default"].size, 2u);  // d1 and r2
  // Nothing checked: nothing changes (an empty jid list would mean "all" to MUTATE).
  EXPECT_EQ(HeaderOf(Post("/dead", "action=delete"), "Location"), "/dead?msg=none");
  EXPECT_EQ(Snapshot().dead, 2u);
  EXPECT_EQ(Post("/dead", "action=kill&jid=d2").status, 400);
  EXPECT_EQ(Post("/dead", "action=bogus&jid=d2").status, 400);
  HttpResponseOut back =
      Post("/dead", "action=delete&jid=d2&jid=r1&back_offset=25&back_jobtype=a%20b&back_x=y");
  EXPECT_EQ(back.status, 303);
  EXPECT_EQ(HeaderOf(back, "Location"), "/dead?msg=delete&offset=25&jobtype=a%20b");
  EXPECT_EQ(Snapshot().dead, 0u);
}

TEST_P(DashboardTest, QueueAndWorkerActions) {
  SetUpDashboard("");
  PutJob("d1", JobState::kDead, Future(1));
  ASSERT_EQ(Post("/dead", "action=requeue&jid=d1").status, 303);
  HttpResponseOut confirm = Get("/queues/confirm?queue=default&action=pause");
  EXPECT_EQ(confirm.status, 200);
  EXPECT_THAT(confirm.body, HasSubstr("name=\"action\" value=\"pause\""));
  EXPECT_FALSE(Snapshot().queues["default"].paused);  // the confirmation page changes nothing
  EXPECT_EQ(Get("/queues/confirm?queue=nope&action=pause").status, 404);
  EXPECT_EQ(Post("/queues", "queue=default&action=pause").status, 303);
  EXPECT_TRUE(Snapshot().queues["default"].paused);
  EXPECT_THAT(Get("/queues?msg=paused").body, HasSubstr("Queue paused."));
  EXPECT_EQ(Post("/queues", "queue=default&action=resume").status, 303);
  EXPECT_FALSE(Snapshot().queues["default"].paused);
  EXPECT_EQ(Post("/queues", "queue=default&action=clear").status, 303);
  EXPECT_EQ(Snapshot().enqueued, 0u);

  engine_->workers().Connect({.wid = "w1", .hostname = "h", .pid = 7}, clock_.Now());
  EXPECT_THAT(Get("/busy").body, HasSubstr("<td class=\"worker-state\">running</td>"));
  EXPECT_EQ(Post("/busy", "wid=w1&action=quiet").status, 303);
  EXPECT_EQ(engine_->workers().StateOf("w1"), WorkerState::kQuiet);
  EXPECT_EQ(Post("/busy", "wid=nope&action=quiet").status, 404);
  EXPECT_EQ(Post("/busy", "action=terminate").status, 303);
  EXPECT_EQ(engine_->workers().StateOf("w1"), WorkerState::kTerminate);
}

TEST_P(DashboardTest, HostActionsReachTheDispatcher) {
  SetUpDashboard("");
  HttpResponseOut r = Post("/hosts", "host=known&action=forget");
  EXPECT_EQ(r.status, 303);
  EXPECT_EQ(HeaderOf(r, "Location"), "/hosts?msg=forget&host=known");
  EXPECT_EQ(Post("/hosts", "host=known&action=probe").status, 303);
  EXPECT_EQ(Post("/hosts", "host=other&action=probe").status, 404);
  EXPECT_EQ(Post("/hosts", "host=known&action=reboot").status, 400);
  EXPECT_EQ(Request("POST", "/hosts", "host=known&action=forget").status, 403);
  EXPECT_EQ(host_actions_,
            (std::vector<std::string>{"forget known", "probe known", "probe other"}));
}

TEST_P(DashboardTest, PagesGoToTheStoreByOffset) {
  SetUpDashboard("");
  for (int i = 0; i < 60; ++i) {
    PutJob("d" + std::to_string(100 + i), JobState::kDead, Future(i), i % 2 ? "odd" : "even");
  }
  std::string page2 = Get("/dead?offset=25").body;
  EXPECT_THAT(page2, HasSubstr("value=\"d125\""));
  EXPECT_THAT(page2, HasSubstr("value=\"d149\""));
  EXPECT_THAT(page2, Not(HasSubstr("value=\"d124\"")));
  EXPECT_THAT(page2, Not(HasSubstr("value=\"d150\"")));
  EXPECT_THAT(page2, HasSubstr("href=\"/dead?offset=50\" rel=\"next\""));
  std::string last = Get("/dead?offset=50").body;
  EXPECT_THAT(last, HasSubstr("value=\"d159\""));
  EXPECT_THAT(last, Not(HasSubstr("rel=\"next\"")));
  std::string odd = Get("/dead?queue=odd&limit=10").body;
  EXPECT_THAT(odd, HasSubstr("value=\"d101\""));
  EXPECT_THAT(odd, HasSubstr("value=\"d119\""));
  EXPECT_THAT(odd, Not(HasSubstr("value=\"d100\"")));
  EXPECT_THAT(odd, HasSubstr("href=\"/dead?offset=20&amp;queue=odd\" rel=\"next\""));
  EXPECT_THAT(Get("/job?jid=d150").body, HasSubstr("<dt>jid</dt><dd>d150</dd>"));
  EXPECT_THAT(Get("/job?jid=d101").body, HasSubstr("<dd>d101</dd>"));
  EXPECT_THAT(Get("/search?jid=d133").body, HasSubstr("/job?jid=d133\">d133</a> in Dead"));
  EXPECT_THAT(Get("/search?jid=zzz").body, HasSubstr("id=\"not-found\""));
}

TEST_P(DashboardTest, LiveFiguresAndOverviewMatchTheSnapshot) {
  SetUpDashboard("");
  PutJob("d1", JobState::kDead, Future(1));
  PutJob("r1", JobState::kRetry, Future(2));
  dashboard_->SampleOnce();
  RunReady();
  EXPECT_EQ(dashboard_->history().seconds().size(), 1u);
  HttpResponseOut live = Get("/live.json");
  EXPECT_EQ(live.status, 200);
  auto j = nlohmann::json::parse(live.body);
  EXPECT_EQ(j["dead"], 1);
  EXPECT_EQ(j["retries"], 1);
  std::string overview = Get("/").body;
  EXPECT_THAT(overview, HasSubstr("data-live=\"dead\">1</span>"));
  EXPECT_THAT(overview, HasSubstr("data-live=\"retries\">1</span>"));
  EXPECT_THAT(overview, HasSubstr("Store <strong>memory</strong>"));
}

TEST_P(DashboardTest, BasePathPrefixesEveryLink) {
  SetUpDashboard("", "/bulkhead");
  HttpResponseOut r = Get("/bulkhead");
  EXPECT_EQ(r.status, 308);
  EXPECT_EQ(HeaderOf(r, "Location"), "/bulkhead/");
  std::string html = Get("/bulkhead/").body;
  EXPECT_THAT(html, HasSubstr("href=\"/bulkhead/dead\""));
  EXPECT_THAT(html, HasSubstr("href=\"/bulkhead/assets/dashboard.css\""));
  EXPECT_EQ(HeaderOf(Post("/bulkhead/dead", "action=delete"), "Location"),
            "/bulkhead/dead?msg=none");
}

// The search finds a job wherever it is (one store lookup), the Busy page shows which
// worker holds which job, and a queued job's page deletes it.
TEST_P(DashboardTest, SearchBusyAndQueuedJobs) {
  SetUpDashboard("");
  for (const char* jid : {"queued-1", "queued-2", "fetched-1"}) {
    store().Push(MakeJob(jid, jid[0] == 'f' ? "work" : "default"),
                 [](Status s) { ASSERT_TRUE(s.ok()) << s.message(); });
  }
  RunReady();
  engine_->workers().Connect(WorkerInfo{.wid = "wid-one", .hostname = "box-1", .pid = 7},
                             clock_.Now());
  std::optional<std::string> fetched;
  engine_->Fetch({"work"}, "wid-one", [&](Result<std::optional<std::string>> r) {
    ASSERT_TRUE(r.ok());
    fetched = r->value_or("");
  });
  RunReady();
  ASSERT_TRUE(fetched && fetched->find("fetched-1") != std::string::npos);

  EXPECT_THAT(Get("/search?jid=queued-1").body,
              HasSubstr("/job?jid=queued-1\">queued-1</a> in queue default"));
  EXPECT_THAT(Get("/search?jid=fetched-1").body,
              HasSubstr("/job?jid=fetched-1\">fetched-1</a> in Busy (reserved)"));
  std::string busy = Get("/busy").body;
  EXPECT_THAT(busy, HasSubstr("data-wid=\"wid-one\""));
  EXPECT_THAT(busy, HasSubstr("box-1"));
  EXPECT_THAT(busy, HasSubstr("/job?jid=fetched-1\">fetched-1</a></td><td>noop</td><td>work</td>"));
  EXPECT_THAT(busy, HasSubstr("Reserved jobs no worker holds (0)"));
  std::string working = Get("/job?jid=fetched-1").body;
  EXPECT_THAT(working, HasSubstr("<span class=\"data\" id=\"holder\">wid-one</span>"));

  std::string queued = Get("/job?jid=queued-2").body;
  EXPECT_THAT(queued, HasSubstr("action=\"/job\""));
  HttpResponseOut del = Post("/job", "jid=queued-2&action=delete");
  EXPECT_EQ(del.status, 303);
  EXPECT_EQ(HeaderOf(del, "Location"), "/queues?msg=deleted-queued");
  EXPECT_EQ(Get("/job?jid=queued-2").status, 404);
  EXPECT_EQ(Post("/job", "jid=fetched-1&action=delete").status, 409);  // reserved: not deleted
  EXPECT_EQ(Get("/job?jid=fetched-1").status, 200);
  EXPECT_EQ(Post("/job", "jid=queued-1").status, 400);
}

}  // namespace
}  // namespace bulkhead::dashboard
