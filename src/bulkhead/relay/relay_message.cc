#include "bulkhead/relay/relay_message.h"

#include <charconv>

#include "bulkhead/relay/base85.h"
#include "bulkhead/util/ascii.h"
#include "bulkhead/util/base64.h"

namespace bulkhead {
namespace {

constexpr char kTrumpet[] = "\xF0\x9F\x8E\xBA";  // 🎺, the relays' alert text

std::string Header(const std::map<std::string, std::string>& headers, const char* name) {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

// The `key` parameter of a header of `k=v` pairs separated by ';' or ',' (Crypto-Key: dh=…;
// p256ecdsa=…, Encryption: salt=…), base64url-decoded and base85-encoded; nullopt when absent or
// not base64.
std::optional<std::string> Parameter(const std::string& value, std::string_view key) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find_first_of(";,", start);
    if (end == std::string::npos) end = value.size();
    std::string_view item = TrimAscii(std::string_view(value).substr(start, end - start));
    size_t eq = item.find('=');
    if (eq != std::string_view::npos && TrimAscii(item.substr(0, eq)) == key) {
      std::string_view v = TrimAscii(item.substr(eq + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      auto bytes = Base64Decode(v);
      if (!bytes.ok() || bytes->empty()) return std::nullopt;
      return Base85Encode(*bytes);
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<int64_t> ReadTtl(const std::string& value) {
  std::string_view v = TrimAscii(value);
  int64_t ttl = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), ttl);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || ttl < 0) return std::nullopt;
  return std::min(ttl, kRelayMaxTtlSeconds);
}

RelayRead Refuse(int status, std::string message) {
  return RelayRead{std::nullopt, RelayRefusal{status, std::move(message)}};
}

// The refusal of a message too large for the service once encoded, or nullopt.
std::optional<RelayRefusal> CheckSize(const RelayMessage& m) {
  size_t size = 0;
  size_t limit = 0;
  if (m.target.service == RelayService::kApns) {
    size = ApnsPayload(m).dump().size();
    limit = kApnsMaxPayloadBytes;
  } else {
    const nlohmann::json message = FcmMessage(m);
    for (const auto& [k, v] : message["android"]["data"].items()) {
      size += k.size() + v.get<std::string>().size();
    }
    limit = kFcmMaxDataBytes;
  }
  if (size <= limit) return std::nullopt;
  return RelayRefusal{413, std::string("the message is ") + std::to_string(size) + " bytes once " +
                               "encoded for " +
                               (m.target.service == RelayService::kApns ? "APNs" : "FCM") +
                               "; at most " + std::to_string(limit) + " (base85 adds a quarter)"};
}

}  // namespace

RelayRead ReadRelayMessage(const RelayTarget& target,
                           const std::map<std::string, std::string>& headers,
                           std::string_view body) {
  RelayMessage m;
  m.target = target;
  const std::string encoding = AsciiLower(TrimAscii(Header(headers, "content-encoding")));
  if (encoding == "aesgcm") {
    auto k = Parameter(Header(headers, "crypto-key"), "dh");
    if (!k) return Refuse(400, "aesgcm: Crypto-Key has no dh=<base64url public key>");
    auto s = Parameter(Header(headers, "encryption"), "salt");
    if (!s) return Refuse(400, "aesgcm: Encryption has no salt=<base64url salt>");
    m.k = std::move(*k);
    m.s = std::move(*s);
  } else if (encoding == "aes128gcm") {
    m.rfc8291 = true;
  } else {
    return Refuse(415, "unsupported Content-Encoding \"" + encoding +
                           "\": the relay takes aes128gcm (RFC 8291) and aesgcm");
  }
  m.p = Base85Encode(body);
  m.ttl = ReadTtl(Header(headers, "ttl"));
  m.topic = std::string(TrimAscii(Header(headers, "topic")));
  if (m.topic.size() > kMaxCollapseIdBytes) {
    return Refuse(400, "Topic is longer than " + std::to_string(kMaxCollapseIdBytes) + " bytes");
  }
  for (char c : m.topic) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Refuse(400, "Topic holds a control character");
    }
  }
  const std::string urgency = AsciiLower(TrimAscii(Header(headers, "urgency")));
  m.low_urgency = urgency == "very-low" || urgency == "low";
  m.unsubscribe_url = std::string(TrimAscii(Header(headers, "unsubscribe-url")));
  if (auto refusal = CheckSize(m)) return RelayRead{std::nullopt, std::move(*refusal)};
  return RelayRead{std::move(m), {}};
}

nlohmann::json ApnsPayload(const RelayMessage& m) {
  nlohmann::json payload = {
      {"aps", {{"alert", kTrumpet}, {"mutable-content", 1}, {"content-available", 1}}}, {"p", m.p}};
  if (!m.target.extra.empty()) payload["x"] = m.target.extra;
  if (!m.k.empty()) payload["k"] = m.k;
  if (!m.s.empty()) payload["s"] = m.s;
  return payload;
}

nlohmann::json FcmMessage(const RelayMessage& m) {
  nlohmann::json data = {{"p", m.p}};
  if (!m.target.extra.empty()) data["x"] = m.target.extra;
  if (!m.k.empty()) data["k"] = m.k;
  if (!m.s.empty()) data["s"] = m.s;
  if (m.rfc8291) data["rfc"] = "1";
  nlohmann::json android = {{"data", std::move(data)},
                            {"notification", {{"title", kTrumpet}}},
                            {"priority", m.low_urgency ? "NORMAL" : "HIGH"}};
  if (m.ttl) android["ttl"] = std::to_string(*m.ttl) + "s";
  if (!m.topic.empty()) android["collapse_key"] = m.topic;
  return {{"android", std::move(android)},
          {"apns", {{"payload", {{"aps", {{"mutable-content", 1}, {"content-available", 1}}}}}}}};
}

std::optional<int64_t> ApnsExpiration(const RelayMessage& m, TimePoint now) {
  if (!m.ttl) return std::nullopt;
  if (*m.ttl == 0) return 0;
  return ToUnixMicros(now) / 1'000'000 + *m.ttl;
}

int ApnsPriority(const RelayMessage& m) { return m.low_urgency ? 5 : 10; }

}  // namespace bulkhead
