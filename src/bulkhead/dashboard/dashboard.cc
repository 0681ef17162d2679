#include "bulkhead/dashboard/dashboard.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bulkhead/dashboard/asset_text.h"
#include "bulkhead/dashboard/basic_auth.h"
#include "bulkhead/dashboard/busy_page.h"
#include "bulkhead/dashboard/hosts_page.h"
#include "bulkhead/dashboard/html.h"
#include "bulkhead/dashboard/job_list_page.h"
#include "bulkhead/dashboard/job_page.h"
#include "bulkhead/dashboard/overview_page.h"
#include "bulkhead/dashboard/queues_page.h"
#include "bulkhead/dashboard/relay_page.h"
#include "bulkhead/dashboard/set_scan.h"
#include "bulkhead/dashboard/throttles_page.h"
#include "bulkhead/util/json.h"

namespace bulkhead::dashboard {
namespace {

// The page paths under the base path (the routes registered when the base path is empty).
constexpr const char* kPagePaths[] = {
    "/",    "/queues", "/queues/confirm", "/busy",      "/scheduled", "/retries", "/dead",
    "/job", "/hosts",  "/search",         "/live.json", "/throttles", "/relay"};

// The messages a redirect after an action may show: fixed texts, so a link cannot put words on
// the page.
const char* FlashText(const std::string& code) {
  static const std::pair<const char*, const char*> kTexts[] = {
      {"paused", "Queue paused."},
      {"resumed", "Queue resumed."},
      {"cleared", "Queue cleared."},
      {"quiet", "Quiet sent."},
      {"terminate", "Terminate sent."},
      {"requeue", "Jobs enqueued."},
      {"delete", "Jobs deleted."},
      {"kill", "Jobs moved to Dead."},
      {"none", "No job was selected."},
      {"deleted-queued", "Job deleted from its queue."},
      {"probe", "Probe sent."},
      {"forget", "Failure history forgotten; parked jobs released."}};
  for (const auto& [c, text] : kTexts) {
    if (code == c) return text;
  }
  return "";
}

HttpResponseOut Asset(std::string_view content_type, std::string_view text) {
  HttpResponseOut r;
  r.content_type = std::string(content_type);
  r.body = std::string(text);
  AddSecurityHeaders(r);
  return r;
}

std::string Header(const HttpRequestIn& req, const char* name) {
  auto it = req.headers.find(name);
  return it == req.headers.end() ? "" : it->second;
}

}  // namespace

Dashboard::Dashboard(boost::asio::io_context& io, Engine& engine, DashboardOptions options,
                     DashboardSources sources)
    : io_(io),
      engine_(engine),
      options_(std::move(options)),
      sources_(std::move(sources)),
      sampler_(io, engine.clock()) {}

Dashboard::~Dashboard() { Stop(); }

void Dashboard::Register(HttpServer& http) {
  auto handler = [this](const HttpRequestIn& req, HttpServer::Reply reply) {
    Handle(req, std::move(reply));
  };
  const std::string& b = options_.base_path;
  if (b.empty()) {
    for (const char* p : kPagePaths) http.Route("*", p, handler);
    http.Route("*", "/assets/", handler);
  } else {
    http.Route("*", b, handler);
    http.Route("*", b + "/", handler);
  }
}

void Dashboard::Start() {
  sampling_ = true;
  SampleOnce();
  ScheduleSample();
}

void Dashboard::Stop() {
  sampling_ = false;
  sampler_.Cancel();
}

void Dashboard::ScheduleSample() {
  sampler_.ExpiresAfter(std::chrono::seconds(1));
  sampler_.AsyncWait([this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (ec || !alive.lock() || !sampling_) return;
    SampleOnce();
    ScheduleSample();
  });
}

void Dashboard::SampleOnce() {
  sources_.snapshot([this, alive = std::weak_ptr<bool>(alive_)](Result<InfoSnapshot> info) {
    if (!alive.lock() || !info.ok()) return;
    HistorySample s;
    s.at = info->engine.now;
    s.processed = info->engine.processed;
    s.failures = info->engine.failures;
    s.retries = static_cast<int64_t>(info->engine.retries);
    if (info->hosts) {
      for (const auto& h : *info->hosts) s.parked += h.parked;
      host_rates_.Add(s.at, *info->hosts);
    }
    for (const auto& [name, q] : info->engine.queues) {
      s.latency_seconds = std::max(s.latency_seconds, q.latency_seconds);
    }
    history_.Add(s);
  });
}

PageContext Dashboard::Context(const HttpRequestIn& req, const std::string& msg_code) const {
  PageContext ctx;
  ctx.base = options_.base_path;
  ctx.csrf_token = csrf_.TokenFor(Header(req, "authorization"));
  ctx.has_password = !options_.password.empty();
  ctx.now = engine_.Now();
  ctx.flash = FlashText(msg_code);
  return ctx;
}

HttpResponseOut Dashboard::ErrorPage(int status, const std::string& message) const {
  PageContext ctx;
  ctx.base = options_.base_path;
  ctx.has_password = !options_.password.empty();
  ctx.now = engine_.Now();
  return HtmlResponse(status, RenderLayout(ctx, "", "Error " + std::to_string(status),
                                           "<p class=\"error\">" + Escape(message) + "</p>"));
}

HttpResponseOut Dashboard::Redirect(const std::string& rel, const std::string& msg_code) const {
  HttpResponseOut r = HtmlResponse(303, "");
  r.headers.emplace_back("Location", options_.base_path + rel +
                                         (msg_code.empty() ? "" : "?msg=" + UrlEncode(msg_code)));
  return r;
}

void Dashboard::Handle(const HttpRequestIn& req, HttpServer::Reply reply) {
  if (!BasicAuthMatches(Header(req, "authorization"), options_.password)) {
    HttpResponseOut r = HtmlResponse(401,
                                     "<!doctype html><title>bulkhead</title>"
                                     "<p>This dashboard needs the server's password.</p>");
    r.headers.emplace_back("WWW-Authenticate", kBasicChallenge);
    return reply(std::move(r));
  }
  const std::string& b = options_.base_path;
  if (req.path.compare(0, b.size(), b) != 0) return reply(ErrorPage(404, "no such page"));
  std::string rel = req.path.substr(b.size());
  if (rel.empty()) {
    HttpResponseOut r = HtmlResponse(308, "");
    r.headers.emplace_back("Location", b + "/");
    return reply(std::move(r));
  }
  if (req.method == "GET" || req.method == "HEAD") return HandleGet(rel, req, std::move(reply));
  if (req.method == "POST") return HandlePost(rel, req, std::move(reply));
  HttpResponseOut r = ErrorPage(405, "method not allowed");
  r.headers.emplace_back("Allow", "GET, HEAD, POST");
  reply(std::move(r));
}

void Dashboard::HandleGet(const std::string& rel, const HttpRequestIn& req,
                          HttpServer::Reply reply) {
  FormFields q = FormFields::Parse(req.query);
  if (rel == "/assets/dashboard.css") {
    return reply(Asset("text/css; charset=utf-8", asset_text::k_dashboard_css));
  }
  if (rel == "/assets/dashboard.js") {
    return reply(Asset("text/javascript; charset=utf-8", asset_text::k_dashboard_js));
  }
  if (rel == "/assets/favicon.svg") return reply(Asset("image/svg+xml", asset_text::k_favicon_svg));
  if (rel == "/live.json") return Live(std::move(reply));
  PageContext ctx = Context(req, q.Get("msg"));
  if (rel == "/") return Overview(std::move(ctx), std::move(reply));
  if (rel == "/queues") return Queues(std::move(ctx), std::move(reply));
  if (rel == "/queues/confirm") {
    return QueueConfirm(std::move(ctx), q.Get("queue"), q.Get("action"), std::move(reply));
  }
  if (rel == "/busy") return Busy(std::move(ctx), std::move(reply));
  if (const SetPage* page = FindSetPage(rel)) {
    return JobList(std::move(ctx), page->set, req.query, std::move(reply));
  }
  if (rel == "/job") return Job(std::move(ctx), req.query, std::move(reply));
  if (rel == "/search") return Search(std::move(ctx), q.Get("jid"), std::move(reply));
  if (rel == "/hosts") return Hosts(std::move(ctx), q.Get("host"), std::move(reply));
  if (rel == "/throttles") return Throttles(std::move(ctx), std::move(reply));
  if (rel == "/relay") {
    return reply(
        HtmlResponse(200, RenderRelayPage(ctx, sources_.relay ? sources_.relay() : std::nullopt)));
  }
  reply(ErrorPage(404, "no such page"));
}

void Dashboard::HandlePost(const std::string& rel, const HttpRequestIn& req,
                           HttpServer::Reply reply) {
  // A browser names the origin of a cross-site request; the token is the real check.
  if (Header(req, "sec-fetch-site") == "cross-site") {
    return reply(ErrorPage(403, "cross-site request refused"));
  }
  FormFields form = FormFields::Parse(req.body);
  if (!csrf_.Check(Header(req, "authorization"), form.Get("csrf"))) {
    return reply(ErrorPage(403, "missing or wrong CSRF token: reload the page and try again"));
  }
  if (rel == "/queues") return QueueAction(req.body, std::move(reply));
  if (rel == "/busy") return WorkerAction(req.body, std::move(reply));
  if (rel == "/job") return QueuedJobAction(req.body, std::move(reply));
  if (rel == "/hosts") return HostAction(req.body, std::move(reply));
  if (const SetPage* page = FindSetPage(rel)) {
    return JobAction(page->set, req.body, std::move(reply));
  }
  reply(ErrorPage(404, "no such action"));
}

void Dashboard::Overview(PageContext ctx, HttpServer::Reply reply) {
  sources_.snapshot([this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx),
                     reply = std::move(reply)](Result<InfoSnapshot> info) {
    if (!alive.lock()) return;
    if (!info.ok()) return reply(ErrorPage(503, info.status().message()));
    std::string problem = sources_.store_problem ? sources_.store_problem() : "";
    reply(HtmlResponse(200, RenderOverviewPage(ctx, *info, history_, problem)));
  });
}

void Dashboard::Queues(PageContext ctx, HttpServer::Reply reply) {
  engine_.Snapshot([this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx),
                    reply = std::move(reply)](Result<EngineSnapshot> e) {
    if (!alive.lock()) return;
    if (!e.ok()) return reply(ErrorPage(503, e.status().message()));
    reply(HtmlResponse(200, RenderQueuesPage(ctx, *e)));
  });
}

void Dashboard::Throttles(PageContext ctx, HttpServer::Reply reply) {
  engine_.Snapshot([this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx),
                    reply = std::move(reply)](Result<EngineSnapshot> e) {
    if (!alive.lock()) return;
    if (!e.ok()) return reply(ErrorPage(503, e.status().message()));
    reply(HtmlResponse(200, RenderThrottlesPage(ctx, *e)));
  });
}

void Dashboard::QueueConfirm(PageContext ctx, const std::string& queue, const std::string& action,
                             HttpServer::Reply reply) {
  if (action != "pause" && action != "resume" && action != "clear") {
    return reply(ErrorPage(400, "action must be pause, resume or clear"));
  }
  engine_.Snapshot([this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx), queue, action,
                    reply = std::move(reply)](Result<EngineSnapshot> e) {
    if (!alive.lock()) return;
    if (!e.ok()) return reply(ErrorPage(503, e.status().message()));
    auto it = e->queues.find(queue);
    if (it == e->queues.end()) return reply(ErrorPage(404, "no queue \"" + queue + "\""));
    reply(HtmlResponse(200, RenderQueueConfirmPage(ctx, queue, action, it->second.size)));
  });
}

// Reserved jobs listed on the Busy page: those workers hold, and the first others.
constexpr size_t kBusyHeldShown = 1000;
constexpr size_t kBusyWorkingShown = 100;

void Dashboard::Busy(PageContext ctx, HttpServer::Reply reply) {
  engine_.Snapshot([this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx),
                    reply = std::move(reply)](Result<EngineSnapshot> e) mutable {
    if (!alive.lock()) return;
    if (!e.ok()) return reply(ErrorPage(503, e.status().message()));
    auto data = std::make_shared<BusyData>();
    data->working_total = e->working;
    data->shared_store = engine_.store().cluster().shared();
    engine_.store().holders().List(
        kBusyHeldShown + 1, [this, alive, data, ctx = std::move(ctx), reply = std::move(reply)](
                                Result<std::vector<HolderStore::HeldJob>> held) mutable {
          if (!alive.lock()) return;
          if (!held.ok()) return reply(ErrorPage(503, held.status().message()));
          data->held = std::move(*held);
          data->held_truncated = data->held.size() > kBusyHeldShown;
          if (data->held_truncated) data->held.resize(kBusyHeldShown);
          // The first reserved jobs, enough to show some no worker holds.
          size_t want = kBusyWorkingShown + data->held.size();
          ScanSet(engine_.store(), {.set = JobState::kWorking, .offset = 0, .want = want}, alive_,
                  [this, data, ctx = std::move(ctx),
                   reply = std::move(reply)](Result<JobListResult> r) {
                    if (!r.ok()) return reply(ErrorPage(503, r.status().message()));
                    data->working = std::move(r->jobs);
                    engine_.ClusterWorkers(
                        [this, alive = std::weak_ptr<bool>(alive_), data, ctx = std::move(ctx),
                         reply = std::move(reply)](Result<std::vector<NodeWorker>> workers) {
                          if (!alive.lock()) return;
                          if (!workers.ok())
                            return reply(ErrorPage(503, workers.status().message()));
                          const std::string here = engine_.store().cluster().node_id();
                          for (NodeWorker& nw : *workers) {
                            if (nw.node == here) {
                              data->workers.emplace(nw.info.wid, std::move(nw.info));
                            } else {
                              data->elsewhere.push_back(std::move(nw));
                            }
                          }
                          reply(HtmlResponse(200, RenderBusyPage(ctx, *data)));
                        });
                  });
        });
  });
}

void Dashboard::JobList(PageContext ctx, JobState set, const std::string& query,
                        HttpServer::Reply reply) {
  FormFields f = FormFields::Parse(query);
  JobListQuery q;
  q.offset = static_cast<size_t>(f.GetInt("offset", 0, 0, int64_t{1} << 40));
  q.limit = static_cast<size_t>(f.GetInt("limit", 25, 1, 200));
  q.queue = f.Get("queue");
  q.jobtype = f.Get("jobtype");
  q.contains = f.Get("q");
  engine_.Snapshot([this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx), set, q,
                    reply = std::move(reply)](Result<EngineSnapshot> e) mutable {
    if (!alive.lock()) return;
    if (!e.ok()) return reply(ErrorPage(503, e.status().message()));
    size_t total = set == JobState::kScheduled ? e->scheduled
                   : set == JobState::kRetry   ? e->retries
                                               : e->dead;
    ScanRequest req{.set = set, .offset = q.offset, .want = q.limit};
    if (q.filtered()) req.match = [q](const JobRecord& j) { return MatchesFilters(j, q); };
    ScanSet(
        engine_.store(), std::move(req), alive_,
        [ctx = std::move(ctx), set, q, total, reply = std::move(reply)](Result<JobListResult> r) {
          if (!r.ok()) {
            HttpResponseOut out = HtmlResponse(503, Escape(r.status().message()));
            return reply(std::move(out));
          }
          reply(HtmlResponse(200, RenderJobListPage(ctx, SetPageOf(set), q, *r, total)));
        });
  });
}

void Dashboard::Job(PageContext ctx, const std::string& query, HttpServer::Reply reply) {
  std::string jid = FormFields::Parse(query).Get("jid");
  engine_.store().FindJob(jid, [this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx),
                                jid, reply = std::move(reply)](
                                   Result<std::optional<JobRecord>> job) mutable {
    if (!alive.lock()) return;
    if (!job.ok()) return reply(ErrorPage(503, job.status().message()));
    if (!job->has_value() || (*job)->state != JobState::kWorking) {
      return reply(HtmlResponse(job->has_value() ? 200 : 404, RenderJobPage(ctx, jid, *job)));
    }
    // A reserved job: its holder too.
    engine_.store().holders().List(
        kBusyHeldShown, [alive, ctx = std::move(ctx), jid, job = std::move(**job),
                         reply = std::move(reply)](Result<std::vector<HolderStore::HeldJob>> held) {
          if (!alive.lock()) return;
          std::string holder;
          if (held.ok()) {
            for (const auto& h : *held) {
              if (h.job.jid == jid) holder = h.wid;
            }
          }
          reply(HtmlResponse(200, RenderJobPage(ctx, jid, job, holder)));
        });
  });
}

// One store lookup by jid (Store::FindJob), wherever the job is.
void Dashboard::Search(PageContext ctx, const std::string& jid, HttpServer::Reply reply) {
  if (jid.empty()) return reply(HtmlResponse(200, RenderSearchPage(ctx, jid, std::nullopt)));
  engine_.store().FindJob(jid,
                          [this, alive = std::weak_ptr<bool>(alive_), ctx = std::move(ctx), jid,
                           reply = std::move(reply)](Result<std::optional<JobRecord>> job) {
                            if (!alive.lock()) return;
                            if (!job.ok()) return reply(ErrorPage(503, job.status().message()));
                            reply(HtmlResponse(200, RenderSearchPage(ctx, jid, *job)));
                          });
}

void Dashboard::Hosts(PageContext ctx, const std::string& host, HttpServer::Reply reply) {
  auto hosts = sources_.hosts ? sources_.hosts() : std::nullopt;
  if (host.empty()) return reply(HtmlResponse(200, RenderHostsPage(ctx, hosts, host_rates_)));
  std::optional<HostView> found;
  if (hosts) {
    for (auto& h : *hosts) {
      if (h.host == host) found = h;
    }
  }
  std::vector<std::string> parked;
  if (found && sources_.parked) parked = sources_.parked(host, kMaxParkedShown);
  reply(HtmlResponse(found ? 200 : 404,
                     RenderHostPage(ctx, host, found, parked, host_rates_.Of(host))));
}

void Dashboard::Live(HttpServer::Reply reply) {
  engine_.Snapshot([this, alive = std::weak_ptr<bool>(alive_),
                    reply = std::move(reply)](Result<EngineSnapshot> e) {
    if (!alive.lock()) return;
    if (!e.ok()) return reply(HttpResponseOut::Error(503, e.status().message()));
    nlohmann::json j = {
        {"processed", e->processed},  {"failures", e->failures}, {"enqueued", e->enqueued},
        {"queues", e->queues.size()}, {"working", e->working},   {"workers", e->worker_count},
        {"scheduled", e->scheduled},  {"retries", e->retries},   {"dead", e->dead}};
    for (const auto& [name, q] : e->queues) j["queue:" + name] = q.size;
    HttpResponseOut r = HttpResponseOut::Json(200, DumpJson(j));
    AddSecurityHeaders(r);
    reply(std::move(r));
  });
}

}  // namespace bulkhead::dashboard
