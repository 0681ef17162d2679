#include "bulkhead/server/relay_server.h"

#include <spdlog/spdlog.h>

namespace bulkhead {

Result<std::unique_ptr<RelayServer>> RelayServer::Create(boost::asio::io_context& io,
                                                         const Config& config, Engine& engine,
                                                         Dispatcher& dispatcher,
                                                         Transport& transport, const Clock& clock,
                                                         Registry& registry) {
  if (config.relay_listen.empty()) {
    if (!config.relay.empty()) {
      spdlog::warn("relay: [[relay.*]] apps are configured but relay_listen is empty: no relay");
    }
    return std::unique_ptr<RelayServer>();
  }
  if (config.relay.empty()) {
    return Status::InvalidArgument(
        "relay_listen is set but no app is configured: add a [[relay.apns]] or [[relay.fcm]] "
        "table (docs/relay.md)");
  }
  std::unique_ptr<RelayServer> relay(new RelayServer(io, config));
  auto apps = RelayApps::Load(config.relay, transport, clock, relay->counters_);
  if (!apps.ok()) return apps.status();
  relay->apps_ = std::move(*apps);
  if (Status s = relay->counters_.RegisterMetrics(registry); !s.ok()) return s;
  relay->delivery_ =
      std::make_unique<RelayDelivery>(engine, *relay->apps_, relay->counters_, clock);
  dispatcher.AddExtension(relay->delivery_.get());
  relay->acceptor_ =
      std::make_unique<RelayAcceptor>(io, engine, *relay->apps_, relay->counters_, clock);
  return relay;
}

Status RelayServer::Listen(const TlsServerContext* tls) {
  http_ = std::make_unique<HttpServer>(
      io_, HttpServer::Options{.max_connections = config_.http_max_connections});
  http_->SetTls(tls);
  http_->Route("*", "/relay-to/", [this](const HttpRequestIn& in, HttpServer::Reply reply) {
    RelayRequest req{in.method, in.path, in.headers, in.body};
    acceptor_->Handle(req, [reply = std::move(reply)](RelayAnswer a) {
      HttpResponseOut out;
      out.status = a.status;
      out.content_type = "text/plain; charset=utf-8";
      out.body = std::move(a.body);
      out.headers = std::move(a.headers);
      reply(std::move(out));
    });
  });
  auto where = ParseHostPort(config_.relay_listen);
  if (!where.ok()) return where.status();
  if (Status s = http_->Listen(where->host, where->port); !s.ok()) return s;
  for (auto& a : apps_->apns()) {
    spdlog::info("relay: APNs app {} (topic {}, {} authentication)", a->config.name,
                 a->config.topic, a->token ? "token" : "certificate");
  }
  for (auto& a : apps_->fcm()) {
    spdlog::info("relay: FCM app {} (project {})", a->config.name, a->project);
  }
  spdlog::info("relay: serving /relay-to/ on {}:{}{}", where->host, http_->port(),
               tls ? " over TLS" : "");
  return Status::Ok();
}

void RelayServer::Stop() {
  if (http_) http_->Stop();
}

RelaySnapshot RelayServer::Snapshot() const {
  RelaySnapshot s;
  s.listen = config_.relay_listen;
  s.apps = counters_.Snapshot();
  return s;
}

}  // namespace bulkhead
