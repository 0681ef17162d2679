// Dashboard: the web dashboard on the HTTP port (docs/dashboard.md). It registers its
// routes under `http_base_path`, answers pages rendered by the *_page.h renderers from the same
// snapshots INFO renders (view/), and runs the actions through the engine's own operations (the
// ones MUTATE, QUEUE PAUSE/RESUME/REMOVE and /api/workers use).
//
// Security: with a password, every route (pages, assets, live.json, actions) needs HTTP Basic with
// that password (any user name). GETs never change state; a change is a POST of a form carrying
// the CSRF token (csrf.h), refused 403 without it or with a wrong one, or when the browser says
// it comes from another site (Sec-Fetch-Site: cross-site). Every response carries the security
// headers of layout.h.
//
// History: a sampler adds the figures to the History ring (history.h) every second from Start()
// to Stop().
//
// Threading: the event loop only (the engine's, the store's and the HttpServer's). Lifetime: the
// engine and the sources outlive the dashboard; store answers arriving after it is destroyed are
// dropped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/dashboard/csrf.h"
#include "bulkhead/dashboard/history.h"
#include "bulkhead/dashboard/host_rates.h"
#include "bulkhead/dashboard/layout.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/http/http_server.h"
#include "bulkhead/relay/relay_figures.h"
#include "bulkhead/util/timer.h"
#include "bulkhead/view/info_snapshot.h"

namespace bulkhead::dashboard {

struct DashboardOptions {
  std::string base_path;  // "" or "/prefix" (settings.cc CheckBasePath)
  std::string password;   // empty: no authentication (the banner says so)
};

// Where the dashboard reads what is not the engine's.
struct DashboardSources {
  // The INFO figures (server/server.cc Server::Snapshot): `cb` runs once, on the loop.
  std::function<void(std::function<void(Result<InfoSnapshot>)>)> snapshot;
  // The delivery hosts now; nullopt without a dispatcher.
  std::function<std::optional<std::vector<HostView>>()> hosts;
  // The jids parked behind `host` (at most `limit`, oldest first); empty without a dispatcher.
  std::function<std::vector<std::string>(const std::string& host, size_t limit)> parked;
  // A host action: "probe" (Dispatcher::ProbeHostNow) or "forget" (ForgetHostFailures, which
  // releases the parked jobs). Null without a dispatcher.
  std::function<Status(const std::string& host, const std::string& action)> host_action;
  // Why the store cannot be used now (degraded or unavailable), or "".
  std::function<std::string()> store_problem;
  // The push relay's figures (the Relay page); null or nullopt: no relay.
  std::function<std::optional<RelaySnapshot>()> relay;
};

class Dashboard {
 public:
  Dashboard(boost::asio::io_context& io, Engine& engine, DashboardOptions options,
            DashboardSources sources);
  ~Dashboard();
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  // Registers the routes (before http.Listen).
  void Register(HttpServer& http);
  // Starts / stops the sampler. Stop is idempotent.
  void Start();
  void Stop();
  // Adds one sample now (the sampler's tick; tests).
  void SampleOnce();

  // Answers one request whose path is under the base path (what the routes call; tests call it
  // directly).
  void Handle(const HttpRequestIn& req, HttpServer::Reply reply);

  const History& history() const { return history_; }
  const CsrfGuard& csrf() const { return csrf_; }

 private:
  PageContext Context(const HttpRequestIn& req, const std::string& msg_code) const;
  void HandleGet(const std::string& rel, const HttpRequestIn& req, HttpServer::Reply reply);
  void HandlePost(const std::string& rel, const HttpRequestIn& req, HttpServer::Reply reply);
  // GET pages.
  void Overview(PageContext ctx, HttpServer::Reply reply);
  void Queues(PageContext ctx, HttpServer::Reply reply);
  void QueueConfirm(PageContext ctx, const std::string& queue, const std::string& action,
                    HttpServer::Reply reply);
  void Busy(PageContext ctx, HttpServer::Reply reply);
  void JobList(PageContext ctx, JobState set, const std::string& query, HttpServer::Reply reply);
  void Job(PageContext ctx, const std::string& query, HttpServer::Reply reply);
  void Search(PageContext ctx, const std::string& jid, HttpServer::Reply reply);
  void Hosts(PageContext ctx, const std::string& host, HttpServer::Reply reply);
  void Throttles(PageContext ctx, HttpServer::Reply reply);
  void Live(HttpServer::Reply reply);
  // POST actions: each answers 303 to the page, with a message code, or an error page.
  void QueueAction(const std::string& body, HttpServer::Reply reply);
  void WorkerAction(const std::string& body, HttpServer::Reply reply);
  void HostAction(const std::string& body, HttpServer::Reply reply);
  void JobAction(JobState set, const std::string& body, HttpServer::Reply reply);
  // Delete a queued job (its page's action): only while it is still queued.
  void QueuedJobAction(const std::string& body, HttpServer::Reply reply);
  HttpResponseOut Redirect(const std::string& rel, const std::string& msg_code) const;
  HttpResponseOut ErrorPage(int status, const std::string& message) const;
  void ScheduleSample();

  boost::asio::io_context& io_;
  Engine& engine_;
  const DashboardOptions options_;
  const DashboardSources sources_;
  const CsrfGuard csrf_;
  History history_;
  HostRates host_rates_;
  Timer sampler_;
  bool sampling_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead::dashboard
