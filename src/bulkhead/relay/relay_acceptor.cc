#include "bulkhead/relay/relay_acceptor.h"

#include <boost/asio/steady_timer.hpp>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/relay/relay_delivery.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

RelayAnswer Text(int status, std::string body) {
  return RelayAnswer{status, std::move(body) + "\n", {}};
}

std::string Seconds(Duration d) {
  auto s = std::chrono::ceil<std::chrono::seconds>(d).count();
  return std::to_string(std::max<int64_t>(1, s));
}

}  // namespace

RelayAcceptor::RelayAcceptor(boost::asio::io_context& io, Engine& engine, RelayApps& apps,
                             RelayCounters& counters, const Clock& clock,
                             RelayAcceptorOptions options)
    : io_(io),
      engine_(engine),
      apps_(apps),
      counters_(counters),
      clock_(clock),
      options_(options) {}

RelayAcceptor::~RelayAcceptor() { *alive_ = false; }

void RelayAcceptor::Handle(const RelayRequest& req, Reply reply) {
  if (req.path == kRelayHealthPath) {
    reply(req.method == "GET" || req.method == "HEAD" ? Text(200, "OK")
                                                      : Text(405, "the health check is GET"));
    return;
  }
  auto target = ParseRelayPath(req.path);
  if (!target.ok()) {
    const int status = target.status().code() == StatusCode::kNotFound ? 404 : 400;
    reply(Text(status, std::string(target.status().message())));
    return;
  }
  if (req.method != "POST") {
    RelayAnswer a = Text(405, "the relay takes POST");
    a.headers.push_back({"Allow", "POST"});
    reply(std::move(a));
    return;
  }
  const bool apns = target->service == RelayService::kApns;
  ApnsApp* apns_app = apns ? apps_.Apns(target->app) : nullptr;
  FcmApp* fcm_app = apns ? nullptr : apps_.Fcm(target->app);
  if (!apns_app && !fcm_app) {
    reply(Text(404, std::string("no ") + (apns ? "[[relay.apns]]" : "[[relay.fcm]]") + " app " +
                        (target->app.empty() ? "is configured" : "is called " + target->app)));
    return;
  }
  RelayAppFigures& figures = apns ? apns_app->figures : fcm_app->figures;
  RelayAppLimits& limits = apns ? apns_app->limits : fcm_app->limits;
  if (auto limited = Limit(limits, figures, target->token)) {
    reply(std::move(*limited));
    return;
  }
  RelayRead read = ReadRelayMessage(*target, req.headers, req.body);
  if (!read.message) {
    counters_.Refused(figures, read.refusal.status);
    reply(Text(read.refusal.status, read.refusal.message));
    return;
  }
  nlohmann::json job = apns ? ApnsJob(*read.message, apns_app->config.name)
                            : FcmJob(*read.message, fcm_app->config.name);
  Store(std::move(job), figures, std::move(reply));
}

std::optional<RelayAnswer> RelayAcceptor::Limit(RelayAppLimits& limits, RelayAppFigures& f,
                                                const std::string& token) {
  const TimePoint now = clock_.Now();
  std::optional<Duration> wait = limits.app.Take(f.app, now);
  const char* what = "the app's";
  if (!wait) {
    wait = limits.token.Take(token, now);
    what = "this device token's";
  }
  if (!wait) return std::nullopt;
  counters_.Refused(f, 429);
  RelayAnswer a = Text(429, std::string("over ") + what + " message rate; try again later");
  a.headers.push_back({"Retry-After", Seconds(*wait)});
  return a;
}

nlohmann::json RelayAcceptor::ApnsJob(const RelayMessage& m, const std::string& app) const {
  nlohmann::json arg = {{"app", app},
                        {"environment", m.target.production ? "production" : "development"},
                        {"token", m.target.token},
                        {"payload", ApnsPayload(m)},
                        {"priority", ApnsPriority(m)}};
  if (auto e = ApnsExpiration(m, clock_.Now())) arg["expiration"] = *e;
  if (m.ttl) arg["ttl"] = *m.ttl;
  if (!m.topic.empty()) arg["collapse_id"] = m.topic;
  if (!m.unsubscribe_url.empty()) arg["unsubscribe_url"] = m.unsubscribe_url;
  return {{"jobtype", kRelayApnsJobType},
          {"queue", "relay"},
          {"retry", options_.retry},
          {"args", nlohmann::json::array({std::move(arg)})}};
}

nlohmann::json RelayAcceptor::FcmJob(const RelayMessage& m, const std::string& app) const {
  nlohmann::json arg = {{"app", app}, {"token", m.target.token}, {"message", FcmMessage(m)}};
  if (m.ttl) arg["ttl"] = *m.ttl;
  if (!m.unsubscribe_url.empty()) arg["unsubscribe_url"] = m.unsubscribe_url;
  return {{"jobtype", kRelayFcmJobType},
          {"queue", "relay"},
          {"retry", options_.retry},
          {"args", nlohmann::json::array({std::move(arg)})}};
}

void RelayAcceptor::Store(nlohmann::json doc, RelayAppFigures& figures, Reply reply) {
  doc["jid"] = RandomHex(12);
  auto job = ParseJobDocument(std::move(doc), clock_.Now());
  if (!job.ok()) {
    counters_.Refused(figures, 400);
    reply(Text(400, std::string(job.status().message())));
    return;
  }
  // One answer, whichever comes first: the store's, or the timeout's 503.
  struct Pending {
    explicit Pending(boost::asio::io_context& io) : timer(io) {}
    boost::asio::steady_timer timer;
    Reply reply;
    bool answered = false;
  };
  auto pending = std::make_shared<Pending>(io_);
  pending->reply = std::move(reply);
  const std::string retry_after = std::to_string(options_.unavailable_retry_after.count());
  auto unavailable = [retry_after](const std::string& why) {
    RelayAnswer a = Text(503, "the message could not be stored: " + why);
    a.headers.push_back({"Retry-After", retry_after});
    return a;
  };
  pending->timer.expires_after(options_.push_timeout);
  pending->timer.async_wait(
      [this, alive = alive_, pending, &figures, unavailable](boost::system::error_code ec) {
        if (ec || !*alive || pending->answered) return;
        pending->answered = true;
        counters_.Refused(figures, 503);
        pending->reply(unavailable("the store did not answer in time"));
      });
  engine_.Push(std::move(*job), [this, alive = alive_, pending, &figures, unavailable](Status s) {
    if (!*alive || pending->answered) return;
    pending->answered = true;
    pending->timer.cancel();
    if (s.ok()) {
      counters_.Accepted(figures);
      pending->reply(RelayAnswer{201, "", {}});
      return;
    }
    if (s.code() == StatusCode::kInvalidArgument) {
      counters_.Refused(figures, 400);
      pending->reply(Text(400, std::string(s.message())));
      return;
    }
    counters_.Refused(figures, 503);
    pending->reply(unavailable(std::string(s.message())));
  });
}

}  // namespace bulkhead
