// Builds the HTTP request for one Web Push job (RFC 8030 + RFC 8291 + RFC 8292), and validates job
// arguments when a job is pushed so that bad jobs are refused up front rather than retried.
//
// Job argument (one JSON object; a one-element array holding it is accepted too):
//   {"subscription": {"endpoint": URL, "keys": {"p256dh": B64URL, "auth": B64URL}},
//    "payload": TEXT,                    optional; absent/null = push without payload
//    "ttl": 172800,                      optional, integer seconds in [0, max_ttl], default 172800
//    "urgency": "normal",                optional: very-low | low | normal | high
//    "topic": "abc",                     optional: 1–32 chars of the base64url alphabet
//    "content_encoding": "aes128gcm",    optional: aes128gcm (default) | aesgcm
//    "unsubscribe_url": URL}             optional: sent as Unsubscribe-URL (https; http only with
//                                        allow_plain_http)
// Unknown fields are ignored.
//
// Request produced (header order as listed):
//   POST <endpoint>
//   TTL, Urgency, [Topic], [Unsubscribe-URL],
//   [Content-Encoding, Content-Type: application/octet-stream],
//   aes128gcm: Authorization: vapid t=<JWT>,k=<key>
//   aesgcm:    Encryption: salt=…, Crypto-Key: dh=…;p256ecdsa=<key>, Authorization: WebPush <JWT>
//              (the legacy scheme Mastodon and npm web-push send with aesgcm)
//   Content-Length
// Unsubscribe-URL is not a standard header: Mastodon sends it with every push (a URL a push relay
// may DELETE to remove a subscription its own service reported gone; app/lib/web_push_request.rb),
// and Mastodon's relays read it (mastodon/webpush-apn-relay).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "bulkhead/encoders/header_list.h"
#include "bulkhead/encoders/target_url.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/encoders/webpush_encryption.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

inline constexpr int64_t kDefaultWebPushTtl = 172800;  // 48 h, what Mastodon sends
inline constexpr int64_t kMaxWebPushTtl = 2419200;     // 28 days, npm web-push's default
inline constexpr size_t kMaxWebPushTopicLength = 32;

struct WebPushArgsOptions {
  // Accept http:// endpoints (local test push services such as web-push-testing).
  bool allow_plain_http = false;
  int64_t max_ttl = kMaxWebPushTtl;
};

// A validated job argument.
struct WebPushArgs {
  std::string endpoint;
  TargetUrl endpoint_url;
  std::optional<WebPushSubscriberKeys> keys;  // always set by ParseWebPushArgs
  std::optional<std::string> payload;
  int64_t ttl = kDefaultWebPushTtl;
  std::string urgency = "normal";
  std::optional<std::string> topic;
  std::optional<std::string> unsubscribe_url;
  ContentEncoding encoding = ContentEncoding::kAes128gcm;
};

// Parses and validates a job argument. InvalidArgument names the field and the problem, e.g.
// "subscription.endpoint: URL scheme must be https" or "payload is 5000 bytes; aes128gcm allows at
// most 3993".
Result<WebPushArgs> ParseWebPushArgs(const nlohmann::json& arg,
                                     const WebPushArgsOptions& options = {});
// ParseWebPushArgs without the result: for refusing bad jobs at PUSH time.
Status ValidateWebPushArgs(const nlohmann::json& arg, const WebPushArgsOptions& options = {});

struct WebPushRequest {
  std::string method;  // "POST"
  std::string url;
  HeaderList headers;
  std::string body;
};

// Encrypts the payload and signs the VAPID token for the endpoint's origin. `encrypt` supplies
// test seams (sender key, salt); its `encoding` is ignored in favour of args.encoding.
// Errors: InvalidArgument from validation, Internal from OpenSSL.
Result<WebPushRequest> BuildWebPushRequest(const WebPushArgs& args, VapidSigner& signer,
                                           const WebPushEncryptOptions& encrypt = {});
// ParseWebPushArgs + BuildWebPushRequest.
Result<WebPushRequest> BuildWebPushRequest(const nlohmann::json& arg, VapidSigner& signer,
                                           const WebPushArgsOptions& options = {});

}  // namespace bulkhead
