#include "bulkhead/encoders/webpush_request.h"

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

Result<std::string> RequiredString(const nlohmann::json& obj, const char* key, const char* path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return Status::InvalidArgument(std::string(path) + " is missing");
  }
  if (!it->is_string()) return Status::InvalidArgument(std::string(path) + " must be a string");
  return it->get<std::string>();
}

// `text` as the URL `field` names: https, or http too with allow_plain_http.
Result<TargetUrl> ReadUrl(const std::string& text, const char* field,
                          const WebPushArgsOptions& options) {
  Result<TargetUrl> url = ParseTargetUrl(text);
  if (!url.ok()) return Status::InvalidArgument(std::string(field) + ": " + url.status().message());
  if (url->scheme != "https" && !options.allow_plain_http) {
    return Status::InvalidArgument(std::string(field) + ": URL scheme must be https");
  }
  return url;
}

// subscription.endpoint (its URL checked) and subscription.keys into `out`.
Status ParseSubscription(const nlohmann::json& arg, const WebPushArgsOptions& options,
                         WebPushArgs& out) {
  auto sub = arg.find("subscription");
  if (sub == arg.end() || !sub->is_object()) {
    return Status::InvalidArgument("subscription must be an object");
  }
  Result<std::string> endpoint = RequiredString(*sub, "endpoint", "subscription.endpoint");
  if (!endpoint.ok()) return endpoint.status();
  Result<TargetUrl> url = ReadUrl(*endpoint, "subscription.endpoint", options);
  if (!url.ok()) return url.status();
  out.endpoint = std::move(*endpoint);
  out.endpoint_url = std::move(*url);

  auto keys = sub->find("keys");
  if (keys == sub->end() || !keys->is_object()) {
    return Status::InvalidArgument("subscription.keys must be an object");
  }
  Result<std::string> p256dh = RequiredString(*keys, "p256dh", "subscription.keys.p256dh");
  if (!p256dh.ok()) return p256dh.status();
  Result<std::string> auth = RequiredString(*keys, "auth", "subscription.keys.auth");
  if (!auth.ok()) return auth.status();
  Result<WebPushSubscriberKeys> parsed = WebPushSubscriberKeys::Parse(*p256dh, *auth);
  if (!parsed.ok()) {
    return Status::InvalidArgument("subscription.keys." + parsed.status().message());
  }
  out.keys = std::move(*parsed);
  return Status::Ok();
}

// content_encoding, and the payload (bounded by what that encoding can carry).
Status ParsePayload(const nlohmann::json& arg, WebPushArgs& out) {
  if (auto it = arg.find("content_encoding"); it != arg.end() && !it->is_null()) {
    if (!it->is_string()) return Status::InvalidArgument("content_encoding must be a string");
    Result<ContentEncoding> enc = ParseContentEncoding(it->get<std::string>());
    if (!enc.ok()) return enc.status();
    out.encoding = *enc;
  }

  if (auto it = arg.find("payload"); it != arg.end() && !it->is_null()) {
    if (!it->is_string()) return Status::InvalidArgument("payload must be a string");
    out.payload = it->get<std::string>();
    size_t max = MaxWebPushPlaintext(out.encoding);
    if (out.payload->size() > max) {
      return Status::InvalidArgument("payload is " + std::to_string(out.payload->size()) +
                                     " bytes; " + ContentEncodingName(out.encoding) +
                                     " allows at most " + std::to_string(max));
    }
  }
  return Status::Ok();
}

// What becomes the push service's headers: ttl, urgency and topic.
Status ParsePushHeaders(const nlohmann::json& arg, const WebPushArgsOptions& options,
                        WebPushArgs& out) {
  if (auto it = arg.find("ttl"); it != arg.end() && !it->is_null()) {
    if (!it->is_number_integer()) return Status::InvalidArgument("ttl must be an integer");
    int64_t ttl = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX}
                      ? INT64_MAX
                      : it->get<int64_t>();
    if (ttl < 0 || ttl > options.max_ttl) {
      return Status::InvalidArgument("ttl must be between 0 and " +
                                     std::to_string(options.max_ttl) + " seconds");
    }
    out.ttl = ttl;
  }

  if (auto it = arg.find("urgency"); it != arg.end() && !it->is_null()) {
    if (!it->is_string()) return Status::InvalidArgument("urgency must be a string");
    std::string u = it->get<std::string>();
    if (u != "very-low" && u != "low" && u != "normal" && u != "high") {
      return Status::InvalidArgument("urgency must be one of very-low, low, normal, high");
    }
    out.urgency = std::move(u);
  }

  if (auto it = arg.find("topic"); it != arg.end() && !it->is_null()) {
    if (!it->is_string()) return Status::InvalidArgument("topic must be a string");
    std::string topic = it->get<std::string>();
    if (topic.empty() || topic.size() > kMaxWebPushTopicLength) {
      return Status::InvalidArgument("topic must be 1 to 32 characters");
    }
    for (char c : topic) {
      if (!IsBase64UrlChar(c)) {
        return Status::InvalidArgument("topic must use only the base64url alphabet [A-Za-z0-9_-]");
      }
    }
    out.topic = std::move(topic);
  }
  return Status::Ok();
}

// unsubscribe_url, sent as Mastodon's Unsubscribe-URL header.
Status ParseUnsubscribeUrl(const nlohmann::json& arg, const WebPushArgsOptions& options,
                           WebPushArgs& out) {
  if (auto it = arg.find("unsubscribe_url"); it != arg.end() && !it->is_null()) {
    if (!it->is_string()) return Status::InvalidArgument("unsubscribe_url must be a URL string");
    Result<TargetUrl> url = ReadUrl(it->get<std::string>(), "unsubscribe_url", options);
    if (!url.ok()) return url.status();
    out.unsubscribe_url = it->get<std::string>();
  }
  return Status::Ok();
}

}  // namespace

Result<WebPushArgs> ParseWebPushArgs(const nlohmann::json& arg_in,
                                     const WebPushArgsOptions& options) {
  const nlohmann::json* arg = &arg_in;
  if (arg->is_array() && arg->size() == 1) arg = &(*arg)[0];
  if (!arg->is_object()) return Status::InvalidArgument("webpush argument must be a JSON object");
  WebPushArgs out;

  if (Status s = ParseSubscription(*arg, options, out); !s.ok()) return s;
  if (Status s = ParsePayload(*arg, out); !s.ok()) return s;
  if (Status s = ParsePushHeaders(*arg, options, out); !s.ok()) return s;
  if (Status s = ParseUnsubscribeUrl(*arg, options, out); !s.ok()) return s;
  return out;
}

Status ValidateWebPushArgs(const nlohmann::json& arg, const WebPushArgsOptions& options) {
  return ParseWebPushArgs(arg, options).status();
}

Result<WebPushRequest> BuildWebPushRequest(const WebPushArgs& args, VapidSigner& signer,
                                           const WebPushEncryptOptions& encrypt) {
  if (!args.keys) return Status::InvalidArgument("webpush arguments have no subscription keys");
  WebPushRequest req;
  req.method = "POST";
  req.url = args.endpoint;
  req.headers.reserve(10);
  req.headers.emplace_back("TTL", std::to_string(args.ttl));
  req.headers.emplace_back("Urgency", args.urgency);
  if (args.topic) req.headers.emplace_back("Topic", *args.topic);
  if (args.unsubscribe_url) req.headers.emplace_back("Unsubscribe-URL", *args.unsubscribe_url);

  Result<std::string> token = signer.Token(args.endpoint_url.Origin());
  if (!token.ok()) return token.status();
  const std::string& vapid_key = signer.key().public_key_b64url();
  const bool legacy = args.encoding == ContentEncoding::kAesgcm;

  std::string crypto_key;
  if (args.payload) {
    WebPushEncryptOptions options = encrypt;
    options.encoding = args.encoding;
    Result<EncryptedPush> push = EncryptWebPush(*args.keys, *args.payload, options);
    if (!push.ok()) return push.status();
    req.headers.emplace_back("Content-Encoding", ContentEncodingName(args.encoding));
    req.headers.emplace_back("Content-Type", "application/octet-stream");
    for (auto& [name, value] : push->headers) {
      if (name == "Crypto-Key") {
        crypto_key = std::move(value);
      } else {
        req.headers.emplace_back(std::move(name), std::move(value));
      }
    }
    req.body = std::move(push->body);
  }
  if (legacy) {
    if (!crypto_key.empty()) crypto_key += ";";
    crypto_key += "p256ecdsa=" + vapid_key;
    req.headers.emplace_back("Crypto-Key", std::move(crypto_key));
    req.headers.emplace_back("Authorization", "WebPush " + *token);
  } else {
    req.headers.emplace_back("Authorization", "vapid t=" + *token + ",k=" + vapid_key);
  }
  req.headers.emplace_back("Content-Length", std::to_string(req.body.size()));
  return req;
}

Result<WebPushRequest> BuildWebPushRequest(const nlohmann::json& arg, VapidSigner& signer,
                                           const WebPushArgsOptions& options) {
  Result<WebPushArgs> args = ParseWebPushArgs(arg, options);
  if (!args.ok()) return args.status();
  return BuildWebPushRequest(*args, signer);
}

}  // namespace bulkhead
