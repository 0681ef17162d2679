#include "bulkhead/server/server.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "bulkhead/dispatch/vapid_key_source.h"
#include "bulkhead/http/bearer_auth.h"
#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/metrics/node_metrics.h"
#include "bulkhead/metrics/prometheus_text.h"
#include "bulkhead/server/backup_api.h"
#include "bulkhead/server/keys_api.h"
#include "bulkhead/server/testing_clock_api.h"
#include "bulkhead/transport/curl_transport.h"
#include "bulkhead/util/descriptors.h"
#include "bulkhead/util/json.h"
#include "bulkhead/view/api_json.h"
#include "bulkhead/view/bridge_gauges.h"
#include "bulkhead/view/delivery_gauges.h"
#include "bulkhead/view/host_view.h"
#include "bulkhead/view/info_json.h"

namespace bulkhead {

namespace asio = boost::asio;

namespace {

int64_t ResidentMemoryMb() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * sysconf(_SC_PAGESIZE) / (1024 * 1024);
}

// /healthz: 503 with the reason while the store is degraded or cannot be reached, else "ok".
HttpResponseOut HealthResponse(const Store& store) {
  HttpResponseOut r;
  r.content_type = "text/plain; charset=utf-8";
  std::string unavailable = store.unavailable_reason();
  if (store.degraded()) {
    r.status = 503;
    r.body = store.degraded_reason() + "\n";
  } else if (!unavailable.empty()) {
    r.status = 503;
    r.body = unavailable + "\n";
  } else {
    r.body = "ok\n";
  }
  return r;
}

// POST /api/workers/<wid>/quiet | /terminate, /api/workers/quiet (all): the signal, sent.
HttpResponseOut ControlWorkers(Engine& engine, const std::string& path) {
  std::string rest = path.substr(std::string("/api/workers/").size());
  auto slash = rest.rfind('/');
  std::string wid = slash == std::string::npos ? "" : rest.substr(0, slash);
  std::string action = slash == std::string::npos ? rest : rest.substr(slash + 1);
  auto state = ParseWorkerState(action);
  if (!state.ok() || *state == WorkerState::kRunning) {
    return HttpResponseOut::Error(400, "action must be quiet or terminate, not \"" + action + "\"");
  }
  if (Status s = engine.SignalWorker(wid, *state); !s.ok()) {
    return HttpResponseOut::Error(404, s.message());
  }
  return HttpResponseOut::Json(200, DumpJson(nlohmann::json{{"state", action}}));
}

}  // namespace

Server::Server(Config config) : Server(std::move(config), SystemClock::Instance()) {}

Server::Server(Config config, Clock& clock, ServerTestHooks hooks)
    : config_(std::move(config)),
      hooks_(std::move(hooks)),
      signals_(io_, SIGINT, SIGTERM),
      hangup_(io_, SIGHUP),
      clock_(clock) {}

Server::~Server() {
  Shutdown();
  RemoveDeliveryGauges(registry_);  // before dispatcher_, whose published snapshot they read
  RemoveBridgeGauges(registry_);    // before bridge_, likewise
}

// What is checked before anything opens: the settings, the descriptor budget, the certificate.
Status Server::Prepare() {
  Status s = config_.Validate();
  if (!s.ok()) return s;
  ApplyDeliveryDefaults(config_);  // before the engine reads retry counts
  // A peer that vanishes mid-write must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  s = CheckDescriptorBudget(config_);
  if (!s.ok()) return s;
  if (!config_.tls_cert_file.empty()) {  // before the store: a bad certificate changes nothing
    auto tls = TlsServerContext::Load(config_.tls_cert_file, config_.tls_key_file);
    if (!tls.ok()) return tls.status();
    tls_ = std::move(*tls);
  }
  return Status::Ok();
}

Status Server::Start() {
  Status s = Prepare();
  if (!s.ok()) return s;
  s = OpenStore();
  if (!s.ok()) return s;
  s = LoadSigningKeys();
  if (!s.ok()) return s;
  engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
  s = StartDelivery();
  if (!s.ok()) return s;
  fwp_ = std::make_unique<FwpServer>(io_, *engine_, config_, rng_);
  fwp_->SetTls(tls_.get());
  fwp_->SetInfoSource([this](FwpServer::InfoCallback cb) { RenderInfo(std::move(cb)); });
  auto listen = ParseHostPort(config_.listen);
  s = fwp_->Listen(listen->host, listen->port);
  if (!s.ok()) return s;
  metrics_ = std::make_unique<ServerMetrics>(registry_, io_, *engine_, dispatcher_.get(), clock_);
  s = metrics_->Register();
  if (!s.ok()) return s;
  s = RegisterStoreUpGauge();
  if (!s.ok()) return s;
  s = StartStatsd();
  if (!s.ok()) return s;
  s = StartSidekiqBridge();
  if (!s.ok()) return s;
  http_ = std::make_unique<HttpServer>(
      io_, HttpServer::Options{.max_connections = config_.http_max_connections}, clock_);
  http_->SetTls(tls_.get());
  RegisterRoutes();
  StartDashboard();
  auto http = ParseHostPort(config_.http);
  s = http_->Listen(http->host, http->port);
  if (!s.ok()) return s;
  if (relay_) {
    s = relay_->Listen(tls_.get());
    if (!s.ok()) return s;
  }
  s = RegisterGuardMetrics();
  if (!s.ok()) return s;
  engine_->Start();
  dashboard_->Start();
  dispatcher_->Start();  // after the engine's first reaper pass: adopts surviving reservations
  if (bridge_) bridge_->Start();
  signals_.async_wait([this](boost::system::error_code ec, int signo) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signo);
    Shutdown();
  });
  WaitForHangup();
  spdlog::info("bulkhead {} serving Faktory protocol{} on {}:{}, HTTP{} on {}:{}, store {}{}",
               BULKHEAD_VERSION, tls_ ? " over TLS" : "", listen->host, fwp_->port(),
               tls_ ? "S" : "", http->host, http_->port(), config_.StoreUrl(),
               config_.password.empty() ? " (no password)" : "");
  if (tls_) spdlog::info("TLS certificate {} ({})", tls_->cert_file(), tls_->description());
  return Status::Ok();
}

// The store the URL names, wrapped as the test hooks say; a fatal store error stops the server.
Status Server::OpenStore() {
  StoreOptions options;
  options.durability = config_.durability;
  options.max_page_count_for_tests = config_.store_max_page_count_for_tests;
  options.salvage_damaged_jobs = config_.salvage_damaged_jobs;
  options.io_context = &io_;
  options.redis_namespace = config_.redis_namespace;
  options.redis_ca_file = config_.redis_ca_file;
  options.node_id = MakeNodeId();
  options.redis_wait_timeout = std::chrono::milliseconds(config_.redis_wait_timeout_ms);
  options.redis_heartbeat_every = std::chrono::milliseconds(config_.redis_heartbeat_ms);
  options.redis_heartbeat_ttl = std::chrono::milliseconds(config_.redis_heartbeat_ttl_ms);
  options.redis_reap_every = std::chrono::milliseconds(config_.redis_reap_ms);
  // The bridge's outcome jobs, like deliveries, are held only by the node writing them.
  if (config_.sidekiq.enabled()) options.redis_give_back_at_stop.push_back(kSidekiqOutcomesQueue);
  Store::Poster post = [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); };
  auto store = OpenStoreFromUrl(config_.StoreUrl(), post, options);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  if (hooks_.wrap_store) store_ = hooks_.wrap_store(std::move(store_), post);
  if (store_->cluster()
          .shared()) {  // several nodes: their own figures apart, the store's without a node
    Status s = registry_.SetExtraLabel(std::string(metric_names::kLabelNode), options.node_id,
                                       IsPerNodeMetric);
    if (!s.ok()) return s;
  }
  store_->SetFatalHandler([this](const Status& error) {
    spdlog::critical("the store cannot be used: {}; stopping", error.message());
    exit_status_ = error;
    Shutdown();
  });
  return Status::Ok();
}

// bulkhead_store_up: 0 while the store is unreachable (Redis down), read at scrape time.
Status Server::RegisterStoreUpGauge() {
  return registry_.AddCallback(
      MetricType::kGauge, metric_names::kStoreUp, metric_names::kStoreUpHelp, {},
      [this]() -> Result<std::vector<MetricSample>> {
        return std::vector<MetricSample>{{{}, store_->unavailable_reason().empty() ? 1.0 : 0.0}};
      });
}

// The StatsD emitter, when statsd.address is set.
Status Server::StartStatsd() {
  if (config_.statsd.address.empty()) return Status::Ok();
  metrics_->PublishEvery();  // the emitter collects off the loop, on its own schedule
  StatsdConfig sc;
  sc.address = config_.statsd.address;
  sc.prefix = config_.statsd.prefix;
  sc.interval = std::chrono::seconds(config_.statsd.interval_seconds);
  auto flavor = ParseStatsdFlavor(config_.statsd.flavor);
  if (!flavor.ok()) return flavor.status();
  sc.flavor = *flavor;
  for (const auto& t : config_.statsd.tags) {
    auto tag = ParseStatsdTag(t);
    if (!tag.ok()) return tag.status();
    sc.tags.push_back(*tag);
  }
  statsd_ = std::make_unique<StatsdEmitter>(registry_, sc);
  return statsd_->Start();
}

Status Server::StartSidekiqBridge() {
  if (!config_.sidekiq.enabled()) return Status::Ok();
  auto options =
      SidekiqBridgeOptionsFrom(config_, store_->cluster().shared(), store_->cluster().node_id());
  if (!options.ok()) return options.status();
  bridge_ = std::make_unique<SidekiqBridge>(io_, clock_, *engine_, std::move(*options));
  return RegisterBridgeGauges(registry_, bridge_->published(), clock_,
                              ServerMetrics::kMaxSnapshotAge);
}

// The dashboard's pages on the HTTP server, reading through the engine, Snapshot and the
// dispatcher's compartments.
void Server::StartDashboard() {
  dashboard_ = std::make_unique<dashboard::Dashboard>(
      io_, *engine_,
      dashboard::DashboardOptions{.base_path = config_.http_base_path,
                                  .password = config_.password},
      dashboard::DashboardSources{.snapshot = [this](auto cb) { Snapshot(std::move(cb)); },
                                  .hosts = [this] { return HostsFromDispatcher(); },
                                  .parked =
                                      [this](const std::string& host, size_t limit) {
                                        std::vector<std::string> jids;
                                        const Compartment* c =
                                            dispatcher_ ? dispatcher_->compartments().Find(host)
                                                        : nullptr;
                                        if (c == nullptr) return jids;
                                        for (const auto& jid : c->parked()) {
                                          if (jids.size() >= limit) break;
                                          jids.push_back(jid);
                                        }
                                        return jids;
                                      },
                                  .host_action =
                                      [this](const std::string& host, const std::string& action) {
                                        if (!dispatcher_)
                                          return Status::NotFound("no delivery engine");
                                        return action == "probe"
                                                   ? dispatcher_->ProbeHostNow(host)
                                                   : dispatcher_->ForgetHostFailures(host);
                                      },
                                  .store_problem =
                                      [this] {
                                        return store_->degraded() ? store_->degraded_reason()
                                                                  : store_->unavailable_reason();
                                      },
                                  .relay = [this]() -> std::optional<RelaySnapshot> {
                                    if (!relay_) return std::nullopt;
                                    return relay_->Snapshot();
                                  }});
  dashboard_->Register(*http_);
}

Status Server::LoadSigningKeys() {
  // The keys must be loaded before a PUSH is validated or a reservation adopted: run the loop
  // (not yet serving anything) until the store has answered, bounded.
  auto loaded = std::make_shared<std::optional<Status>>();
  signing_keys_.Open(*store_, [loaded](Status st) { *loaded = std::move(st); });
  auto deadline = std::chrono::steady_clock::now() + kSigningKeysWait;
  while (!loaded->has_value() && io_.run_one_until(deadline) > 0) {
  }
  if (io_.stopped()) io_.restart();
  if (loaded->has_value() && loaded->value().ok()) return Status::Ok();
  if (loaded->has_value() && loaded->value().code() != StatusCode::kUnavailable) return **loaded;
  // The store is unreachable (it reconnects by itself): serve, and load the keys once it is back.
  spdlog::warn("the signing keys are not loaded yet ({}); loading them once the store answers",
               loaded->has_value() ? loaded->value().message() : "the store did not answer");
  keys_retry_ = std::make_unique<asio::steady_timer>(io_);
  RetrySigningKeys();
  return Status::Ok();
}

void Server::RetrySigningKeys() {
  keys_retry_->expires_after(kSigningKeysRetry);
  keys_retry_->async_wait([this](boost::system::error_code ec) {
    if (ec || shut_down_) return;
    // Asked only once the store answers again, so a long outage logs nothing per attempt.
    if (!store_->unavailable_reason().empty()) return RetrySigningKeys();
    signing_keys_.Open(*store_, [this](Status st) {
      if (shut_down_) return;
      if (!st.ok()) return RetrySigningKeys();
      keys_retry_.reset();
    });
  });
}

Status CheckDescriptorBudget(const Config& config) {
  auto limit = RaiseDescriptorLimit();
  if (!limit.ok()) return limit.status();
  uint64_t need = static_cast<uint64_t>(config.max_connections) + FwpServer::kOverflowConnections +
                  static_cast<uint64_t>(config.http_max_connections) +
                  static_cast<uint64_t>(config.delivery.global_max_in_flight) +
                  kReservedDescriptors;
  if (need > limit->soft) {
    return Status::InvalidArgument(
        "not enough file descriptors: max_connections (" + std::to_string(config.max_connections) +
        ") + " + std::to_string(FwpServer::kOverflowConnections) +
        " refused at the cap + http_max_connections (" +
        std::to_string(config.http_max_connections) + ") + [delivery] global_max_in_flight (" +
        std::to_string(config.delivery.global_max_in_flight) + ") + " +
        std::to_string(kReservedDescriptors) + " for the store, logs and listeners need " +
        std::to_string(need) + ", but RLIMIT_NOFILE is " + std::to_string(limit->soft) +
        " (hard limit " + std::to_string(limit->hard) +
        "): raise it (systemd LimitNOFILE=, ulimit -n) or lower max_connections");
  }
  spdlog::debug("file descriptors: limit {} (hard {}), budget {}", limit->soft, limit->hard, need);
  return Status::Ok();
}

Result<VapidKey> Server::LoadServerVapidKey() {
  // Precedence and forms: dispatch/vapid_key_source.h. Only public keys are ever logged.
  VapidKeyVariables variables = VapidKeyVariablesFromEnvironment();
  std::error_code ec;
  if (!variables.private_key && !variables.public_key && config_.StoreUrl() == "memory:" &&
      config_.vapid_private_key_file.empty() &&
      !std::filesystem::exists(VapidKeyPath(config_), ec)) {
    // "memory:" keeps nothing on disk; run `bulkhead vapid-key` first for a lasting key.
    Result<VapidKey> key = VapidKey::Generate();
    if (key.ok()) {
      spdlog::warn("memory store and no {}: using a VAPID key that ends with this process",
                   VapidKeyPath(config_));
    }
    return key;
  }
  Result<ServerVapidKey> resolved = ResolveVapidKey(config_, variables, /*create=*/true);
  if (!resolved.ok()) return resolved.status();
  if (resolved->created) spdlog::info("generated the VAPID key {}", resolved->source);
  if (!resolved->warning.empty()) spdlog::warn("{}", resolved->warning);
  spdlog::info("VAPID key from {}: public key {}", resolved->source,
               resolved->key.public_key_b64url());
  return std::move(resolved->key);
}

Status Server::StartDelivery() {
  TransportOptions transport_options;
  transport_options.ssrf.allow_private_targets = config_.allow_private_targets;
  if (!config_.delivery_ca_file.empty() && !std::ifstream(config_.delivery_ca_file)) {
    // Fail at start, not on every delivery to an https:// target.
    return Status::InvalidArgument("delivery_ca_file " + config_.delivery_ca_file +
                                   " cannot be read");
  }
  transport_options.ca_file = config_.delivery_ca_file;
  auto transport = CurlTransport::Create(io_, std::move(transport_options));
  if (!transport.ok()) return transport.status();
  transport_ = std::move(*transport);

  Result<VapidKey> key = LoadServerVapidKey();
  if (!key.ok()) return key.status();
  auto signer = VapidSigner::Create(*key, config_.vapid_subject, clock_);
  if (!signer.ok()) return signer.status();
  vapid_signer_ = std::move(*signer);

  DispatcherConfig dc = MakeDispatcherConfig(config_);
  if (config_.sidekiq.enabled()) {
    // Outcome jobs wait in bulkhead's store until the bridge has written them to Sidekiq, as the
    // one object (bridge/sidekiq_outcome_writer.h).
    dc.outcomes_queue = kSidekiqOutcomesQueue;
    if (dc.outcome_args != OutcomeArgs::kObject) {
      spdlog::warn(
          "delivery_outcome_args = \"positional\" does not apply to outcome jobs written "
          "to Sidekiq: their one argument is the outcome object");
    }
    dc.outcome_args = OutcomeArgs::kObject;
  }
  dispatcher_ = std::make_unique<Dispatcher>(io_, *engine_, *transport_, vapid_signer_.get(),
                                             signing_keys_, clock_, rng_, std::move(dc));
  dispatcher_->BuildOnWorkers(RequestBuilderThreads(config_.delivery.crypto_threads));
  Status s = dispatcher_->RegisterMetrics(registry_);
  if (!s.ok()) return s;
  s = RegisterDeliveryGauges(registry_, dispatcher_->published_snapshot(),
                             dispatcher_->host_labels(), clock_, ServerMetrics::kMaxSnapshotAge);
  if (!s.ok()) return s;
  engine_->SetBuiltinJobs(dispatcher_.get());
  auto relay =
      RelayServer::Create(io_, config_, *engine_, *dispatcher_, *transport_, clock_, registry_);
  if (!relay.ok()) return relay.status();
  relay_ = std::move(*relay);
  return Status::Ok();
}

Status Server::RegisterGuardMetrics() {
  namespace mn = metric_names;
  using Samples = Result<std::vector<MetricSample>>;
  auto read = [](const std::atomic<int64_t>& c) {
    return static_cast<double>(c.load(std::memory_order_relaxed));
  };
  const GuardCounters& fwp = fwp_->guards();
  const GuardCounters& http = http_->guards();
  Status s =
      registry_.AddCallback(MetricType::kCounter, mn::kLoginFailuresTotal,
                            mn::kLoginFailuresTotalHelp, {}, [&fwp, read]() -> Samples {
                              return std::vector<MetricSample>{{{}, read(fwp.login_failures)}};
                            });
  if (!s.ok()) return s;
  s = registry_.AddCallback(MetricType::kCounter, mn::kLoginsThrottledTotal,
                            mn::kLoginsThrottledTotalHelp, {}, [&fwp, read]() -> Samples {
                              return std::vector<MetricSample>{{{}, read(fwp.logins_throttled)}};
                            });
  if (!s.ok()) return s;
  s = registry_.AddCallback(
      MetricType::kCounter, mn::kTlsHandshakeFailuresTotal, mn::kTlsHandshakeFailuresTotalHelp,
      {std::string(mn::kLabelListener)}, [&fwp, &http, read]() -> Samples {
        return std::vector<MetricSample>{{{"faktory"}, read(fwp.tls_handshake_failures)},
                                         {{"http"}, read(http.tls_handshake_failures)}};
      });
  if (!s.ok()) return s;
  return registry_.AddCallback(
      MetricType::kCounter, mn::kConnectionsShedTotal, mn::kConnectionsShedTotalHelp,
      {std::string(mn::kLabelListener), std::string(mn::kLabelReason)},
      [&fwp, &http, read]() -> Samples {
        return std::vector<MetricSample>{
            {{"faktory", "fd_limit"}, read(fwp.fwp_fd_limit)},
            {{"faktory", "max_connections"}, read(fwp.fwp_max_connections)},
            {{"faktory", "unsent_replies"}, read(fwp.fwp_unsent_replies)},
            {{"http", "fd_limit"}, read(http.http_fd_limit)},
            {{"http", "max_connections"}, read(http.http_max_connections)},
            {{"http", "evicted"}, read(http.http_idle_evicted)},
        };
      });
}

void Server::RegisterRoutes() {
  // 503 with the reason while the store is degraded: the process answers, but it can no longer
  // keep what it accepts, so a load balancer or orchestrator should take it out and page someone.
  // The same while the store cannot be reached (Redis down), until it is back.
  http_->Route("GET", "/healthz", [this](const HttpRequestIn&, HttpServer::Reply reply) {
    HttpResponseOut r = HealthResponse(*store_);
    // The bridge's Redis is the application's, not bulkhead's: its outage is said, not failed.
    if (r.status == 200 && bridge_ && !bridge_->up()) {
      r.body += "sidekiq bridge down: " + bridge_->down_reason() + "\n";
    }
    reply(std::move(r));
  });
  // Rendered once the figures of this moment are published (the store may answer later).
  http_->Route("GET", "/metrics", [this](const HttpRequestIn&, HttpServer::Reply reply) {
    if (bridge_) bridge_->Publish();
    metrics_->Publish([this, reply = std::move(reply)]() mutable {
      HttpResponseOut r;
      r.content_type = std::string(kPrometheusTextContentType);
      r.body = RenderPrometheusText(registry_);
      reply(std::move(r));
    });
  });
  http_->Route("GET", "/api/info", [this](const HttpRequestIn&, HttpServer::Reply reply) {
    RenderInfo([reply](Result<std::string> info) {
      reply(info.ok() ? HttpResponseOut::Json(200, *info)
                      : HttpResponseOut::Error(503, info.status().message()));
    });
  });
  http_->Route("GET", "/api/hosts", [this](const HttpRequestIn&, HttpServer::Reply reply) {
    reply(HttpResponseOut::Json(
        200, RenderHostsJson(HostsFromDispatcher().value_or(std::vector<HostView>{}))));
  });
  http_->Route("GET", "/api/workers", [this](const HttpRequestIn&, HttpServer::Reply reply) {
    engine_->ClusterWorkers([reply = std::move(reply)](Result<std::vector<NodeWorker>> workers) {
      reply(workers.ok() ? HttpResponseOut::Json(200, RenderWorkersJson(*workers))
                         : HttpResponseOut::Error(503, workers.status().message()));
    });
  });
  // POST /api/workers/<wid>/quiet | /terminate ; POST /api/workers/quiet (all). Needs the bearer
  // token when a password is set.
  auto control_workers = [this](const HttpRequestIn& req, HttpServer::Reply reply) {
    reply(ControlWorkers(*engine_, req.path));
  };
  http_->Route("POST", "/api/workers/", RequireBearer(config_.password, control_workers));
  RegisterKeysApi(*http_, signing_keys_, config_.password);
  RegisterTestingClockApi(*http_, hooks_.testing_clock, config_.password);
  RegisterBackupApi(*http_, *store_, clock_, config_.password);
}

void Server::Snapshot(std::function<void(Result<InfoSnapshot>)> cb) {
  engine_->Snapshot([this, cb = std::move(cb)](Result<EngineSnapshot> engine) {
    if (!engine.ok()) {
      cb(engine.status());
      return;
    }
    InfoSnapshot info;
    info.engine = std::move(*engine);
    ServerCounters counters = fwp_->counters();
    info.server.connections = counters.connections;
    info.server.command_count = counters.command_count;
    info.server.used_memory_mb = ResidentMemoryMb();
    info.hosts = HostsFromDispatcher();
    if (dispatcher_) info.delivery = ClusterViewFrom(dispatcher_->Snapshot());
    if (bridge_) {
      info.sidekiq = bridge_->Snapshot();
      auto waiting = info.engine.queues.find(kSidekiqOutcomesQueue);
      if (waiting != info.engine.queues.end()) {
        info.sidekiq->outcomes_waiting = static_cast<int64_t>(waiting->second.size);
      }
    }
    if (relay_) info.relay = relay_->Snapshot();
    cb(std::move(info));
  });
}

void Server::RenderInfo(std::function<void(Result<std::string>)> cb) {
  Snapshot([cb = std::move(cb)](Result<InfoSnapshot> info) {
    if (!info.ok()) {
      cb(info.status());
      return;
    }
    cb(RenderInfoJson(*info));
  });
}

std::optional<std::vector<HostView>> Server::HostsFromDispatcher() {
  if (!dispatcher_) return std::nullopt;
  return HostViewsFrom(dispatcher_->Snapshot());
}

void Server::WaitForHangup() {
  hangup_.async_wait([this](boost::system::error_code ec, int) {
    if (ec) return;
    if (!tls_) {
      spdlog::info("SIGHUP: no TLS certificate to reload");
    } else if (Status s = tls_->Reload(); s.ok()) {
      spdlog::info("SIGHUP: reloaded the TLS certificate {} ({}); new connections use it",
                   tls_->cert_file(), tls_->description());
    } else {
      spdlog::error("SIGHUP: TLS certificate not reloaded, the old one stays in use: {}",
                    s.message());
    }
    WaitForHangup();
  });
}

void Server::Run() { io_.run(); }

void Server::Stop() {
  asio::post(io_, [this] { Shutdown(); });
}

void Server::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  boost::system::error_code ec;
  if (keys_retry_) keys_retry_->cancel();
  signals_.cancel(ec);
  hangup_.cancel(ec);
  if (statsd_) statsd_->Stop();
  if (metrics_) metrics_->Stop();
  if (dashboard_) dashboard_->Stop();
  if (bridge_) bridge_->Stop();  // before the engine: its outcome FETCHes are withdrawn
  if (relay_) relay_->Stop();
  // Deliveries in flight end as cancelled; their jobs stay reserved for the next start.
  if (dispatcher_) dispatcher_->Stop();
  if (transport_) transport_->Shutdown();
  if (engine_) engine_->Stop();  // answers blocked FETCHes
  if (fwp_) fwp_->Stop();
  if (http_) http_->Stop();
  // Let the replies above reach their sockets, then commit the store's last changes.
  io_.poll();
  if (store_) store_->Close();
  io_.poll();  // durable callbacks posted by the final commit
  io_.stop();
}

}  // namespace bulkhead
