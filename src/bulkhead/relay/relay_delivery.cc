#include "bulkhead/relay/relay_delivery.h"

#include <spdlog/spdlog.h>

#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

// A Build failure that is the credentials' fault (the app stops) starts with this.
constexpr std::string_view kCredentials = "credentials: ";
constexpr auto kNoTtlDeadline = std::chrono::hours(24);
constexpr auto kMinDeadline = std::chrono::minutes(1);
// Retries of the Unsubscribe-URL DELETE (a webhook job).
constexpr int kUnsubscribeRetry = 10;

Status Bad(std::string_view jobtype, const std::string& what) {
  return Status::InvalidArgument(std::string(jobtype) + ": " + what);
}

std::string String(const nlohmann::json& arg, const char* key) {
  auto it = arg.find(key);
  return it != arg.end() && it->is_string() ? it->get<std::string>() : "";
}

bool IsApns(std::string_view jobtype) { return jobtype == kRelayApnsJobType; }

}  // namespace

RelayDelivery::RelayDelivery(Engine& engine, RelayApps& apps, RelayCounters& counters,
                             const Clock& clock, Deadlines deadlines)
    : engine_(engine), apps_(apps), counters_(counters), clock_(clock), deadlines_(deadlines) {}

bool RelayDelivery::Handles(std::string_view jobtype) const {
  return jobtype == kRelayApnsJobType || jobtype == kRelayFcmJobType;
}

Status RelayDelivery::Read(const nlohmann::json& arg, TimePoint born, DeliveryJob& job) const {
  const std::string app = String(arg, "app");
  const std::string token = String(arg, "token");
  if (token.empty()) return Bad(job.jobtype, "args[0].token must be the device token");
  if (IsApns(job.jobtype)) {
    ApnsApp* a = apps_.Apns(app);
    if (!a || a->config.name != app) {
      return Bad(job.jobtype, "args[0].app: no [[relay.apns]] app is called \"" + app + "\"");
    }
    const std::string env = String(arg, "environment");
    if (env != "production" && env != "development") {
      return Bad(job.jobtype, "args[0].environment must be production or development");
    }
    if (!arg.contains("payload") || !arg["payload"].is_object()) {
      return Bad(job.jobtype, "args[0].payload must be the APNs payload object");
    }
    const std::string& base =
        env == "production" ? a->config.production_url : a->config.development_url;
    job.url = base + "/3/device/" + token;
    job.host = "apns:" + app;
  } else {
    FcmApp* a = apps_.Fcm(app);
    if (!a || a->config.name != app) {
      return Bad(job.jobtype, "args[0].app: no [[relay.fcm]] app is called \"" + app + "\"");
    }
    if (!arg.contains("message") || !arg["message"].is_object()) {
      return Bad(job.jobtype, "args[0].message must be the FCM message object");
    }
    job.url = a->config.url + "/v1/projects/" + a->project + "/messages:send";
    job.host = "fcm:" + app;
  }
  auto ttl = arg.find("ttl");
  if (ttl != arg.end() && ttl->is_number_integer()) {
    job.deadline =
        born + std::max<Duration>(std::chrono::seconds(ttl->get<int64_t>()), kMinDeadline);
  } else {
    job.deadline = born + kNoTtlDeadline;
  }
  return Status::Ok();
}

void RelayDelivery::Build(const DeliveryJob& job, BuildDone done) {
  const nlohmann::json& arg = job.args[0];
  const std::string app = String(arg, "app");
  if (IsApns(job.jobtype)) {
    ApnsApp* a = apps_.Apns(app);
    if (!a) {
      done(Status::FailedPrecondition("relay: the APNs app \"" + app + "\" is not configured"));
      return;
    }
    done(BuildApns(job, *a));
    return;
  }
  FcmApp* a = apps_.Fcm(app);
  if (!a) {
    done(Status::FailedPrecondition("relay: the FCM app \"" + app + "\" is not configured"));
    return;
  }
  BuildFcm(job, *a, std::move(done));
}

Result<HttpRequest> RelayDelivery::BuildApns(const DeliveryJob& job, ApnsApp& app) {
  const nlohmann::json& arg = job.args[0];
  HttpRequest r;
  r.method = "POST";
  r.url = job.url;
  r.deadlines = deadlines_;
  r.body = arg["payload"].dump();
  // Apple, "Sending notification requests to APNs": the request headers.
  r.headers = {{"apns-topic", app.config.topic},
               {"apns-push-type", "alert"},
               {"apns-priority", std::to_string(arg.value("priority", 10))},
               {"content-type", "application/json"}};
  if (auto e = arg.find("expiration"); e != arg.end() && e->is_number_integer()) {
    r.headers.push_back({"apns-expiration", std::to_string(e->get<int64_t>())});
  }
  if (std::string c = String(arg, "collapse_id"); !c.empty()) {
    r.headers.push_back({"apns-collapse-id", c});
  }
  if (app.token) {
    auto jwt = app.token->Current();
    if (!jwt.ok()) {
      return Status::Internal(std::string(kCredentials) +
                              "cannot sign the APNs token: " + std::string(jwt.status().message()));
    }
    r.headers.push_back({"authorization", "bearer " + *jwt});
  } else {
    r.client_certificate = app.certificate;
  }
  return r;
}

void RelayDelivery::BuildFcm(const DeliveryJob& job, FcmApp& app, BuildDone done) {
  nlohmann::json message = job.args[0]["message"];
  message["token"] = String(job.args[0], "token");
  std::string url = job.url;
  Deadlines deadlines = deadlines_;
  app.access->Get([done = std::move(done), message = std::move(message), url = std::move(url),
                   deadlines](Result<std::string> token) {
    if (!token.ok()) {
      std::string why(token.status().message());
      if (token.status().code() == StatusCode::kPermissionDenied) {
        why = std::string(kCredentials) + why;
      }
      done(Status::Unavailable(why));
      return;
    }
    HttpRequest r;
    r.method = "POST";
    r.url = url;
    r.deadlines = deadlines;
    r.headers = {{"authorization", "Bearer " + *token},
                 {"content-type", "application/json; charset=UTF-8"}};
    r.body = nlohmann::json{{"message", message}}.dump();
    done(std::move(r));
  });
}

ExtensionVerdict RelayDelivery::Judge(const DeliveryJob& job, const HttpResponse& response,
                                      Duration latency, TimePoint now) {
  const bool apns = IsApns(job.jobtype);
  RelayVerdict v;
  if (!response.ok()) {
    v = ClassifyRelayFailure(response);
    if (response.error == TransportError::kOther &&
        response.error_message.rfind(kCredentials, 0) == 0) {
      v.action = RelayAction::kStopApp;
      v.reason = "credentials";
    }
  } else {
    v = apns ? ClassifyApns(response.status, response.body)
             : ClassifyFcm(response.status, response.body);
  }
  const std::string app = String(job.args[0], "app");
  RelayAppFigures* f = nullptr;
  if (apns) {
    if (ApnsApp* a = apps_.Apns(app)) f = &a->figures;
  } else if (FcmApp* a = apps_.Fcm(app)) {
    f = &a->figures;
  }
  if (f) {
    RelayEvent event = v.outcome.cls == OutcomeClass::kOk          ? RelayEvent::kForwarded
                       : v.outcome.cls == OutcomeClass::kGone      ? RelayEvent::kGone
                       : v.outcome.cls == OutcomeClass::kPermanent ? RelayEvent::kDead
                                                                   : RelayEvent::kRetried;
    double seconds = response.ok() ? std::chrono::duration<double>(latency).count() : -1;
    counters_.Attempt(*f, event, v.reason, seconds);
  }
  return ExtensionVerdict{v.outcome, Act(job, v, now)};
}

std::optional<TimePoint> RelayDelivery::Act(const DeliveryJob& job, const RelayVerdict& v,
                                            TimePoint now) {
  const std::string app = String(job.args[0], "app");
  ApnsApp* apns = IsApns(job.jobtype) ? apps_.Apns(app) : nullptr;
  FcmApp* fcm = IsApns(job.jobtype) ? nullptr : apps_.Fcm(app);
  if (!apns && !fcm) return std::nullopt;
  RelayAppFigures& f = apns ? apns->figures : fcm->figures;
  switch (v.action) {
    case RelayAction::kStopApp: {
      const TimePoint until = now + kStopHold;
      if (f.stopped_reason != v.reason) {
        spdlog::error(
            "relay: app {} stopped: {} refused its credentials ({}); its messages wait (within "
            "their TTL); trying again at {}. Check the app's {} in [[relay.{}]]",
            app, apns ? "APNs" : "FCM", v.outcome.reason, FormatRfc3339(until),
            apns ? "key_file, key_id, team_id or certificate_file" : "service_account_file",
            apns ? "apns" : "fcm");
      }
      counters_.Stopped(f, v.reason, until);
      return until;
    }
    case RelayAction::kRenewToken:
      if (apns && apns->token) apns->token->Expired();
      if (fcm) fcm->access->Invalidate();
      return std::nullopt;
    case RelayAction::kSlowApp:
      return now + kSlowHold;
    case RelayAction::kNone:
      break;
  }
  if (v.outcome.cls == OutcomeClass::kOk && !f.stopped_reason.empty()) {
    spdlog::info("relay: app {} resumed: {} takes its messages again", app, apns ? "APNs" : "FCM");
    counters_.Stopped(f, "", std::nullopt);
  }
  return std::nullopt;
}

bool RelayDelivery::OnGone(const DeliveryJob& job, const Outcome& outcome) {
  const std::string url = String(job.args[0], "unsubscribe_url");
  if (url.empty()) return false;
  nlohmann::json doc = {
      {"jid", "bh-unsubscribe-" + job.jid},
      {"jobtype", "webhook"},
      {"queue", "relay"},
      {"retry", kUnsubscribeRetry},
      {"args", nlohmann::json::array(
                   {{{"url", url},
                     {"method", "DELETE"},
                     {"context", {{"relay_jid", job.jid}, {"reason", outcome.reason}}}}})}};
  auto parsed = ParseJobDocument(std::move(doc), clock_.Now());
  if (!parsed.ok()) {
    spdlog::warn("relay: cannot unsubscribe {}: {}", url, parsed.status().message());
    return false;
  }
  const std::string app = String(job.args[0], "app");
  RelayAppFigures* f = nullptr;
  if (IsApns(job.jobtype)) {
    if (ApnsApp* a = apps_.Apns(app)) f = &a->figures;
  } else if (FcmApp* a = apps_.Fcm(app)) {
    f = &a->figures;
  }
  if (f) counters_.Unsubscribe(*f);
  engine_.Push(std::move(*parsed), [url](Status s) {
    if (!s.ok()) spdlog::warn("relay: the unsubscribe of {} was not stored: {}", url, s.message());
  });
  return true;
}

}  // namespace bulkhead
