// RelayMessage: one Web Push message as a push relay receives it (RFC 8030 §5: an encrypted
// body with TTL, Urgency, Topic; the encryption's parameters in Content-Encoding and, for the
// legacy `aesgcm`, Crypto-Key and Encryption), read into what reaches the device, and the
// payloads that carry it there. The device-side fields are exactly those of the Mastodon relays
// (mastodon/webpush-apn-relay main.go, mastodon/webpush-fcm-relay), so the apps' existing
// decryption code works unchanged:
//   p  base85 (base85.h) of the body (the ciphertext: with aes128gcm, RFC 8188's whole record
//      with its header; with aesgcm, the bare ciphertext)
//   x  the URL's EXTRA segments, when there are any
//   k  aesgcm: base85 of the sender's public key (Crypto-Key's `dh`, base64url-decoded)
//   s  aesgcm: base85 of the salt (Encryption's `salt`, base64url-decoded)
//   rfc  FCM with aes128gcm: "1", as the newer FCM relay marks RFC 8291 messages
// APNs: {"aps": {"alert": "🎺", "mutable-content": 1, "content-available": 1}, "p": …, "x": …,
// "k": …, "s": …}; FCM: android.data {p, x, k, s, rfc} and android.notification.title "🎺".
// Header mapping (the same relays'): TTL → apns-expiration (now + TTL; TTL 0 → 0, Apple's "once,
// not stored") / android.ttl; Topic → apns-collapse-id / android.collapse_key; Urgency very-low or
// low → apns-priority 5 / NORMAL, anything else → 10 / HIGH. Unsubscribe-URL is kept for the
// outcome (relay_delivery.h).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "bulkhead/relay/relay_path.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

// APNs refuses a payload over 4096 bytes (PayloadTooLarge); FCM a message whose data is over
// 4096 bytes. The relay refuses such a message itself (413) instead of storing it.
inline constexpr size_t kApnsMaxPayloadBytes = 4096;
inline constexpr size_t kFcmMaxDataBytes = 4096;
// The longest TTL kept (Web Push services keep at most 28 days).
inline constexpr int64_t kRelayMaxTtlSeconds = 2419200;
// apns-collapse-id: at most 64 bytes (Apple, "Sending notification requests to APNs").
inline constexpr size_t kMaxCollapseIdBytes = 64;

struct RelayMessage {
  RelayTarget target;
  std::string p;
  std::string k;  // aesgcm only
  std::string s;  // aesgcm only
  bool rfc8291 = false;
  std::optional<int64_t> ttl;  // seconds; nullopt: no (readable) TTL header
  std::string topic;           // the Topic header: the collapse id / key
  bool low_urgency = false;
  std::string unsubscribe_url;
};

// Why a request is refused, as the relay answers it.
struct RelayRefusal {
  int status = 400;  // 400, 413, 415
  std::string message;
};

// Reads a request to `target`. `headers` has lower-case names.
struct RelayRead {
  std::optional<RelayMessage> message;
  RelayRefusal refusal;  // when there is no message
};
RelayRead ReadRelayMessage(const RelayTarget& target,
                           const std::map<std::string, std::string>& headers,
                           std::string_view body);

// The APNs request body.
nlohmann::json ApnsPayload(const RelayMessage& message);
// The FCM HTTP v1 `message` object without its `token`.
nlohmann::json FcmMessage(const RelayMessage& message);
// apns-expiration at `now` for the message's TTL: unix seconds, 0 for TTL 0, nullopt for none.
std::optional<int64_t> ApnsExpiration(const RelayMessage& message, TimePoint now);
// apns-priority: 5 for Urgency very-low or low, else 10.
int ApnsPriority(const RelayMessage& message);

}  // namespace bulkhead
