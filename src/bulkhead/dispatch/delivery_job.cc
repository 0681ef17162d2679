#include "bulkhead/dispatch/delivery_job.h"

#include <algorithm>
#include <cctype>

#include "bulkhead/encoders/header_list.h"
#include "bulkhead/encoders/http_signature.h"
#include "bulkhead/encoders/target_url.h"
#include "bulkhead/encoders/webpush_request.h"
#include "bulkhead/util/ascii.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

Status Bad(const DeliveryJob& job, const std::string& what) {
  return Status::InvalidArgument(job.jobtype + ": " + what);
}

// Parses `url` as a delivery target and fills job.url / job.host.
Status ReadTarget(DeliveryJob& job, const nlohmann::json& value, const std::string& field,
                  const DeliveryJobOptions& options) {
  if (!value.is_string()) return Bad(job, field + " must be a URL string");
  auto url = ParseTargetUrl(value.get<std::string>());
  if (!url.ok()) return Bad(job, field + ": " + url.status().message());
  if (url->scheme != "https" && !options.allow_private_targets) {
    return Bad(job, field + ": URL scheme must be https");
  }
  job.url = value.get<std::string>();
  job.host = url->Authority();
  return Status::Ok();
}

Status ReadWebhook(DeliveryJob& job, const nlohmann::json& arg, const DeliveryJobOptions& options) {
  Status s =
      ReadTarget(job, arg.contains("url") ? arg["url"] : nlohmann::json(), "args[0].url", options);
  if (!s.ok()) return s;
  if (arg.contains("method")) {
    const auto& m = arg["method"];
    static const char* kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    bool known = m.is_string() && std::any_of(std::begin(kMethods), std::end(kMethods),
                                              [&](const char* k) { return m == k; });
    if (!known) return Bad(job, "args[0].method must be one of GET, POST, PUT, PATCH, DELETE");
  }
  if (arg.contains("headers")) {
    const auto& h = arg["headers"];
    if (!h.is_object()) return Bad(job, "args[0].headers must be an object of strings");
    for (const auto& [name, value] : h.items()) {
      if (!IsHeaderFieldName(name))
        return Bad(job, "args[0].headers: \"" + name + "\" is not a header name");
      if (!value.is_string() || !IsHeaderFieldValue(value.get<std::string>())) {
        return Bad(job, "args[0].headers." + name + " must be a string without control characters");
      }
      if (EqualsIgnoreCase(name, "host") || EqualsIgnoreCase(name, "content-length") ||
          EqualsIgnoreCase(name, "transfer-encoding")) {
        return Bad(job, "args[0].headers." + name + " is set by bulkhead");
      }
    }
  }
  return Status::Ok();
}

// The headers an activitypub job may add: those Mastodon adds to a delivery besides the ones
// bulkhead sets (app/lib/request.rb; app/workers/activitypub/delivery_worker.rb), each signed.
constexpr const char* kActivityPubHeaders[] = {"Collection-Synchronization"};

Status ReadActivityPubHeaders(const DeliveryJob& job, const nlohmann::json& arg) {
  auto h = arg.find("headers");
  if (h == arg.end() || h->is_null()) return Status::Ok();
  if (!h->is_object()) return Bad(job, "args[0].headers must be an object of strings");
  for (const auto& item : h->items()) {
    const std::string& name = item.key();
    const nlohmann::json& value = item.value();
    bool allowed = std::any_of(std::begin(kActivityPubHeaders), std::end(kActivityPubHeaders),
                               [&](const char* k) { return EqualsIgnoreCase(name, k); });
    if (!allowed) {
      return Bad(job, "args[0].headers: \"" + name +
                          "\" cannot be set; an activitypub job may set only "
                          "Collection-Synchronization");
    }
    if (!value.is_string() || value.get<std::string>().empty() ||
        !IsHeaderFieldValue(value.get<std::string>())) {
      return Bad(job, "args[0].headers." + name +
                          " must be a non-empty string without control characters");
    }
    if (value.get<std::string>().size() > kMaxActivityPubHeaderBytes) {
      return Bad(job, "args[0].headers." + name + " is longer than " +
                          std::to_string(kMaxActivityPubHeaderBytes) + " bytes");
    }
  }
  return Status::Ok();
}

Status ReadActivityPub(DeliveryJob& job, const nlohmann::json& arg,
                       const DeliveryJobOptions& options, const KeyRing* keys) {
  Status s = ReadTarget(job, arg.contains("inbox") ? arg["inbox"] : nlohmann::json(),
                        "args[0].inbox", options);
  if (!s.ok()) return s;
  if (!arg.contains("activity") || !(arg["activity"].is_object() || arg["activity"].is_string())) {
    return Bad(job, "args[0].activity must be a JSON object or a string");
  }
  if (!arg.contains("key_id") || !arg["key_id"].is_string() || arg["key_id"].empty() ||
      arg["key_id"].get<std::string>().empty()) {
    return Bad(job, "args[0].key_id must be the actor's key URI");
  }
  std::string key_id = arg["key_id"].get<std::string>();
  if (keys && !keys->Find(key_id)) {
    return Bad(job, "args[0].key_id: no signing key is registered for \"" + key_id + "\"");
  }
  return ReadActivityPubHeaders(job, arg);
}

// args[0].context: absent, null, or an object of at most kMaxDeliveryContextBytes.
Status ReadContext(DeliveryJob& job, const nlohmann::json& arg) {
  auto c = arg.find("context");
  if (c == arg.end() || c->is_null()) return Status::Ok();
  if (!c->is_object()) return Bad(job, "args[0].context must be a JSON object");
  const size_t size = c->dump().size();
  if (size > kMaxDeliveryContextBytes) {
    return Bad(job, "args[0].context is " + std::to_string(size) + " bytes as JSON; at most " +
                        std::to_string(kMaxDeliveryContextBytes));
  }
  job.context = *c;
  return Status::Ok();
}

// The field of args[0] that names the delivery's target.
const nlohmann::json* TargetOf(JobKind kind, const nlohmann::json& arg) {
  const nlohmann::json* holder = &arg;
  const char* field = kind == JobKind::kActivityPub ? "inbox" : "url";
  if (kind == JobKind::kWebPush) {
    auto sub = arg.find("subscription");
    if (sub == arg.end() || !sub->is_object()) return nullptr;
    holder = &*sub;
    field = "endpoint";
  }
  auto it = holder->find(field);
  return it == holder->end() ? nullptr : &*it;
}

// Reads the job's retry count and last failure into `job`; returns the start of the job's life
// (created_at, which survives retries, where enqueued_at does not).
TimePoint ReadRetryState(DeliveryJob& job, const nlohmann::json& doc, const JobRecord& record) {
  TimePoint born = record.enqueued_us ? FromUnixMicros(record.enqueued_us) : TimePoint{};
  if (auto c = doc.find("created_at"); c != doc.end() && c->is_string()) {
    auto t = ParseRfc3339(c->get<std::string>());
    if (t.ok()) born = *t;
  }
  if (auto r = doc.find("retry"); r != doc.end() && r->is_number_integer()) {
    job.retry = r->get<int>();
  }
  if (auto f = doc.find("failure"); f != doc.end() && f->is_object()) {
    auto rc = f->find("retry_count");
    if (rc != f->end() && rc->is_number_integer()) job.last_retry_count = rc->get<int>();
    auto message = f->find("message");
    if (message != f->end() && message->is_string()) job.last_failure = message->get<std::string>();
  }
  return born;
}

}  // namespace

Result<DeliveryJob> ParseDeliveryJob(const JobRecord& record, const DeliveryJobOptions& options,
                                     const KeyRing* keys, DeliveryExtension* extension) {
  DeliveryJob job;
  job.jid = record.jid;
  job.jobtype = record.jobtype;
  auto kind = JobKindFromName(record.jobtype);
  if (extension && extension->Handles(record.jobtype)) {
    job.extension = extension;
  } else if (!kind) {
    return Status::InvalidArgument(record.jobtype + " is not a delivery job type");
  } else {
    job.kind = *kind;
  }
  auto doc = nlohmann::json::parse(record.payload, nullptr, false);
  if (!doc.is_object()) return Bad(job, "the job is not a JSON object");
  auto args = doc.find("args");
  if (args == doc.end() || !args->is_array() || args->empty() || !(*args)[0].is_object()) {
    return Bad(job, "args must hold one object (args[0])");
  }
  job.args = *args;
  const nlohmann::json& arg = (*args)[0];

  TimePoint born = ReadRetryState(job, doc, record);
  if (Status s = ReadContext(job, arg); !s.ok()) return s;
  if (job.extension) {
    if (Status s = job.extension->Read(arg, born, job); !s.ok()) return s;
    return job;
  }

  switch (job.kind) {
    case JobKind::kWebPush: {
      WebPushArgsOptions wo;
      wo.allow_plain_http = options.allow_private_targets;
      auto parsed = ParseWebPushArgs(arg, wo);
      if (!parsed.ok()) return Bad(job, parsed.status().message());
      job.url = parsed->endpoint;
      job.host = parsed->endpoint_url.Authority();
      job.deadline = born + std::max<Duration>(std::chrono::seconds(parsed->ttl),
                                               options.min_webpush_deadline);
      break;
    }
    case JobKind::kActivityPub: {
      Status s = ReadActivityPub(job, arg, options, keys);
      if (!s.ok()) return s;
      job.deadline = born + options.activitypub_deadline;
      break;
    }
    case JobKind::kWebhook: {
      Status s = ReadWebhook(job, arg, options);
      if (!s.ok()) return s;
      job.deadline = born + options.webhook_deadline;
      break;
    }
  }
  return job;
}

DeliveryJob ReadRefusedDeliveryJob(const JobRecord& record) {
  DeliveryJob job;
  job.jid = record.jid;
  job.jobtype = record.jobtype;
  auto kind = JobKindFromName(record.jobtype);
  auto doc = nlohmann::json::parse(record.payload, nullptr, false);
  if (!kind || !doc.is_object()) return job;
  job.kind = *kind;
  auto args = doc.find("args");
  if (args == doc.end() || !args->is_array() || args->empty() || !(*args)[0].is_object()) {
    return job;
  }
  const nlohmann::json& arg = (*args)[0];
  if (const nlohmann::json* target = TargetOf(job.kind, arg); target && target->is_string()) {
    if (auto url = ParseTargetUrl(target->get<std::string>()); url.ok()) {
      job.url = target->get<std::string>();
      job.host = url->Authority();
    }
  }
  if (!ReadContext(job, arg).ok()) job.context = nullptr;
  return job;
}

Result<HttpRequest> BuildDeliveryRequest(const DeliveryJob& job, VapidSigner* signer,
                                         const KeyRing& keys, const Clock& clock) {
  const nlohmann::json& arg = job.args[0];
  HttpRequest req;
  req.url = job.url;
  switch (job.kind) {
    case JobKind::kWebPush: {
      if (!signer) return Status::FailedPrecondition("webpush: no VAPID key configured");
      WebPushArgsOptions wo;
      wo.allow_plain_http = true;  // validated at PUSH; the transport's SSRF guard still applies
      auto built = BuildWebPushRequest(arg, *signer, wo);
      if (!built.ok()) return built.status();
      req.method = built->method;
      req.url = built->url;
      for (auto& [n, v] : built->headers) {
        if (EqualsIgnoreCase(n, "content-length")) continue;  // the transport sets it
        req.headers.push_back({n, v});
      }
      req.body = std::move(built->body);
      return req;
    }
    case JobKind::kActivityPub: {
      std::string key_id = arg["key_id"].get<std::string>();
      auto key = keys.Find(key_id);
      if (!key) {
        return Status::InvalidArgument("no signing key is registered for \"" + key_id + "\"");
      }
      const auto& activity = arg["activity"];
      req.method = "POST";
      // A string is the body as the application serialised it: its bytes, unchanged.
      req.body = activity.is_string() ? activity.get<std::string>() : activity.dump();
      HeaderList extra;
      if (auto h = arg.find("headers"); h != arg.end() && h->is_object()) {
        for (const auto& [name, value] : h->items()) extra.emplace_back(name, value);
      }
      auto headers = SignHttpRequest("POST", job.url, req.body, key_id, *key, clock,
                                     kActivityJsonContentType, extra);
      if (!headers.ok()) return headers.status();
      for (auto& [n, v] : *headers) req.headers.push_back({n, v});
      return req;
    }
    case JobKind::kWebhook: {
      req.method = arg.value("method", std::string("POST"));
      bool has_type = false;
      if (arg.contains("headers")) {
        for (const auto& [name, value] : arg["headers"].items()) {
          has_type = has_type || EqualsIgnoreCase(name, "content-type");
          req.headers.push_back({name, value.get<std::string>()});
        }
      }
      if (arg.contains("body") && !arg["body"].is_null()) {
        const auto& body = arg["body"];
        if (body.is_string()) {
          req.body = body.get<std::string>();
        } else {
          req.body = body.dump();
          if (!has_type) req.headers.push_back({"Content-Type", "application/json"});
        }
      }
      return req;
    }
  }
  return Status::Internal("unknown job kind");
}

}  // namespace bulkhead
