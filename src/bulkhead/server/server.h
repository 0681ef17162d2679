// Server: one bulkhead process — store, engine, Faktory listener and HTTP side on one event loop,
// plus the store's writer thread. Start() opens everything or fails with a clear Status;
// Run() serves until Stop() or SIGINT/SIGTERM, then shuts down gracefully (pending FETCHes are
// answered, sessions closed, the store's last changes committed).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bulkhead/bridge/sidekiq_bridge.h"
#include "bulkhead/config/config.h"
#include "bulkhead/dashboard/dashboard.h"
#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/dispatch/store_key_ring.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/http/http_server.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/statsd_emitter.h"
#include "bulkhead/protocol/fwp_server.h"
#include "bulkhead/server/relay_server.h"
#include "bulkhead/server/server_metrics.h"
#include "bulkhead/store/store.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/offset_clock.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/tls_server_context.h"
#include "bulkhead/view/info_snapshot.h"

namespace bulkhead {

// Descriptors kept for all but client connections and deliveries: the store's files, logs,
// listeners, the event loop, StatsD.
inline constexpr uint64_t kReservedDescriptors = 64;

// Raises RLIMIT_NOFILE's soft limit to its hard limit, then checks that every connection cap fits
// in it; InvalidArgument names each term and what to change.
Status CheckDescriptorBudget(const Config& config);

// How a test assembles a server differently. Never filled from a config file or flag.
struct ServerTestHooks {
  // Wraps the store the server opens (e.g. store/testing/deferred_store.h, to run a suite over a
  // store that answers every call later); `post` runs a closure on the server's event loop. The
  // result is the store the server uses; empty: the store as opened.
  std::function<std::unique_ptr<Store>(std::unique_ptr<Store> store, Store::Poster post)>
      wrap_store;
  // `serve --testing-clock`: the server's clock (the one given to the constructor), which
  // POST /api/testing/clock moves (testing_clock_api.h); null: that route refuses.
  OffsetClock* testing_clock = nullptr;
};

class Server {
 public:
  explicit Server(Config config);
  // With `clock` for every time and timer instead of the system clock (tests; it outlives the
  // server), and `hooks` to assemble it differently.
  Server(Config config, Clock& clock, ServerTestHooks hooks = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Status Start();
  // Serves until stopped. Returns after a graceful shutdown.
  void Run();
  // Thread-safe: asks the loop to shut down.
  void Stop();

  uint16_t fwp_port() const { return fwp_ ? fwp_->port() : 0; }
  uint16_t http_port() const { return http_ ? http_->port() : 0; }
  uint16_t relay_port() const { return relay_ ? relay_->port() : 0; }
  // After Run: OK, or the fatal store error that stopped the server (store.h SetFatalHandler:
  // e.g. a Redis namespace of another layout version found after a start without Redis).
  const Status& exit_status() const { return exit_status_; }

 private:
  void RegisterRoutes();
  // Loads the signing keys (StoreKeyRing::Open), waiting at most kSigningKeysWait. While the store
  // is unavailable (Redis down at start) it serves without them and RetrySigningKeys loads them
  // once the store is back; until then a PUSH answers "store unavailable" (Engine::Push).
  Status LoadSigningKeys();
  void RetrySigningKeys();
  static constexpr std::chrono::seconds kSigningKeysWait{10};
  static constexpr std::chrono::milliseconds kSigningKeysRetry{200};
  // The figures INFO shows, for RenderInfo: the engine's snapshot, this process's figures and the
  // delivery hosts. On the loop; `cb` runs once, now or on a later turn of the loop.
  void Snapshot(std::function<void(Result<InfoSnapshot>)> cb);
  // The INFO document (FWP INFO and GET /api/info), rendered by view/info_json.h from Snapshot().
  void RenderInfo(std::function<void(Result<std::string>)> cb);
  // The dispatcher's hosts as the views show them (nullopt when there is no dispatcher).
  std::optional<std::vector<HostView>> HostsFromDispatcher();
  // bulkhead_login_*_total and bulkhead_connections_shed_total, read from the listeners.
  Status RegisterGuardMetrics();
  // Transport, VAPID signer and Dispatcher for the built-in delivery jobs.
  Status StartDelivery();
  // The VAPID key in effect (dispatch/vapid_key_source.h), logged by its public key and source.
  Result<VapidKey> LoadServerVapidKey();
  // The steps of Start, in this order among the others there.
  Status Prepare();
  Status OpenStore();
  Status RegisterStoreUpGauge();
  Status StartStatsd();
  // The Sidekiq bridge, when [sidekiq] redis is set: started after the engine and the dispatcher,
  // its figures on /metrics.
  Status StartSidekiqBridge();
  void StartDashboard();
  void Shutdown();
  // SIGHUP: reload the TLS certificate and key (logged; a failure keeps the old ones).
  void WaitForHangup();

  Config config_;
  ServerTestHooks hooks_;
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  boost::asio::signal_set hangup_;
  std::unique_ptr<TlsServerContext> tls_;  // null: plain TCP and HTTP
  Clock& clock_;
  DefaultRng rng_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<FwpServer> fwp_;
  std::unique_ptr<HttpServer> http_;
  Registry registry_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<StatsdEmitter> statsd_;
  // Delivery: declared after registry_ and engine_, so the dispatcher goes first (its counters
  // live in the registry and it is the engine's BuiltinJobs), then the transport it sends on. The
  // per-host gauges (view/delivery_gauges.h) read its published snapshot: ~Server removes them
  // first.
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<VapidSigner> vapid_signer_;
  StoreKeyRing signing_keys_;  // ActivityPub signing keys, opened on store_
  std::unique_ptr<Dispatcher> dispatcher_;
  // The Sidekiq bridge (null: off). Before the engine and dispatcher go (it uses both); its gauges
  // read its published figures: ~Server removes them first.
  std::unique_ptr<SidekiqBridge> bridge_;
  std::unique_ptr<RelayServer> relay_;                     // null: no relay_listen
  std::unique_ptr<dashboard::Dashboard> dashboard_;        // the web UI on http_ (dashboard/)
  std::unique_ptr<boost::asio::steady_timer> keys_retry_;  // set while the keys wait for the store
  Status exit_status_;
  bool shut_down_ = false;
};

}  // namespace bulkhead
