// RelayAcceptor: the relay's HTTP side (docs/relay.md). For each request to the relay's listener:
//   GET /relay-to/_health            200 "OK"
//   POST /relay-to/...               (relay_path.h) → the app → its limits (429 + Retry-After)
//                                    → the message (relay_message.h: 400, 413, 415) → a
//                                    relay.apns / relay.fcm job pushed to the store → 201 once it
//                                    is durable; 503 + Retry-After when the store refuses it or
//                                    has not answered within push_timeout. Never waits for APNs or
//                                    FCM: the Dispatcher forwards the job (relay_delivery.h).
// The HTTP server itself is the caller's (server/ serves it on relay_listen); this class sees
// plain request and answer values. Event loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/engine/engine.h"
#include "bulkhead/relay/relay_apps.h"
#include "bulkhead/relay/relay_figures.h"
#include "bulkhead/relay/relay_message.h"

namespace bulkhead {

struct RelayRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

struct RelayAnswer {
  int status = 201;
  std::string body;  // text/plain
  std::vector<std::pair<std::string, std::string>> headers;
};

struct RelayAcceptorOptions {
  // A store that has not answered a push by then is answered 503 for (the message may still be
  // stored and forwarded: the sender's retry can then deliver it twice).
  Duration push_timeout = std::chrono::seconds(5);
  // Retry-After of a 503.
  std::chrono::seconds unavailable_retry_after{10};
  // Retries of a relay job (its TTL ends it sooner when shorter).
  int retry = 10;
};

class RelayAcceptor {
 public:
  using Reply = std::function<void(RelayAnswer)>;

  RelayAcceptor(boost::asio::io_context& io, Engine& engine, RelayApps& apps,
                RelayCounters& counters, const Clock& clock, RelayAcceptorOptions options = {});
  ~RelayAcceptor();

  void Handle(const RelayRequest& request, Reply reply);

 private:
  // The job of `message` for `app` (a relay.apns or relay.fcm job document).
  nlohmann::json ApnsJob(const RelayMessage& message, const std::string& app) const;
  nlohmann::json FcmJob(const RelayMessage& message, const std::string& app) const;
  void Store(nlohmann::json job, RelayAppFigures& figures, Reply reply);
  std::optional<RelayAnswer> Limit(RelayAppLimits& limits, RelayAppFigures& f,
                                   const std::string& token);

  boost::asio::io_context& io_;
  Engine& engine_;
  RelayApps& apps_;
  RelayCounters& counters_;
  const Clock& clock_;
  const RelayAcceptorOptions options_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bulkhead
