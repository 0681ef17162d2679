// RelayServer: the push relay inside the server (docs/relay.md): its apps and their credentials
// (relay/relay_apps.h), the relay job types run by the Dispatcher (relay/relay_delivery.h), and
// its own HTTP listener on relay_listen (the same Beast server as the HTTP port, with the same
// TLS) answering through RelayAcceptor. Event loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "bulkhead/config/config.h"
#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/http/http_server.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/relay/relay_acceptor.h"
#include "bulkhead/relay/relay_apps.h"
#include "bulkhead/relay/relay_delivery.h"
#include "bulkhead/relay/relay_figures.h"

namespace bulkhead {

class RelayServer {
 public:
  // Reads the apps' credentials and registers the relay job types with `dispatcher` (before it
  // starts) and the relay metrics in `registry`. Null when the config has no relay (no
  // relay_listen); InvalidArgument when relay_listen is set without apps, or an app's credentials
  // cannot be read.
  static Result<std::unique_ptr<RelayServer>> Create(boost::asio::io_context& io,
                                                     const Config& config, Engine& engine,
                                                     Dispatcher& dispatcher, Transport& transport,
                                                     const Clock& clock, Registry& registry);

  // Opens the listener on relay_listen, with `tls` when given (it must outlive the server).
  Status Listen(const TlsServerContext* tls);
  void Stop();

  uint16_t port() const { return http_ ? http_->port() : 0; }
  RelaySnapshot Snapshot() const;

 private:
  RelayServer(boost::asio::io_context& io, const Config& config) : io_(io), config_(config) {}

  boost::asio::io_context& io_;
  const Config& config_;
  RelayCounters counters_;
  std::unique_ptr<RelayApps> apps_;
  std::unique_ptr<RelayDelivery> delivery_;
  std::unique_ptr<RelayAcceptor> acceptor_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace bulkhead
