// Transport: the seam between delivery logic and the network. One HTTP exchange per Send(), with
// deadlines that bound how long a remote host can hold it, and an outcome that always arrives.
//
// The real implementation is CurlTransport (curl_transport.h); compartment and breaker tests use a
// scripted fake behind this interface.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bulkhead {

// How long one exchange may take. A zero duration turns that deadline off (total cannot be off).
struct Deadlines {
  // TCP connect plus TLS handshake (and name resolution, which is bounded by the same budget).
  std::chrono::milliseconds connect{5000};
  // From the moment the request can be written on a connected (possibly reused) connection to the
  // first response byte.
  std::chrono::milliseconds first_byte{10000};
  // From Send() to the last response byte, redirects included.
  std::chrono::milliseconds total{30000};
  // Cut the exchange when fewer than low_speed_limit bytes/s move for low_speed_time
  // (libcurl checks once a second, so low_speed_time is in whole seconds). 0 = off.
  int64_t low_speed_limit = 0;
  std::chrono::seconds low_speed_time{0};
};

struct HttpHeader {
  std::string name;
  std::string value;
  bool operator==(const HttpHeader&) const = default;
};
using HttpHeaders = std::vector<HttpHeader>;

// A TLS client certificate and its private key, PEM (APNs certificate authentication). Shared,
// never copied per request; the key never leaves the process.
struct ClientCertificate {
  std::string cert_pem;  // the certificate, then its chain
  std::string key_pem;   // unencrypted
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;      // absolute http(s) URL
  HttpHeaders headers;  // sent as given; the transport adds Host and Content-Length itself
  std::string body;
  Deadlines deadlines;
  // Redirects are returned as responses unless asked for; followed ones (at most 3 hops) go through
  // the same address check as the first request.
  bool follow_redirects = false;
  // HTTP/2 where the server offers it over TLS (ALPN), many requests multiplexed on one
  // connection; false: HTTP/1.1 only.
  bool http2 = true;
  // Presented when the server asks for a client certificate; null: none.
  std::shared_ptr<const ClientCertificate> client_certificate;
};

// Why an exchange produced no usable HTTP response (Classify in compartment/outcome.h reads it).
enum class TransportError {
  kNone = 0,          // an HTTP response arrived (any status)
  kDns,               // the name did not resolve
  kConnectRefused,    // TCP connect failed (refused, unreachable)
  kConnectTimeout,    // TCP connect or TLS handshake did not finish within deadlines.connect
  kTls,               // TLS failed (certificate verification, protocol error)
  kTimeoutFirstByte,  // connected, but no response byte within deadlines.first_byte
  kTimeoutTotal,      // deadlines.total passed
  kLowSpeed,          // the low-speed cut fired
  kReset,             // the peer reset or closed the connection before a full response
  kSsrfRefused,       // the target address or scheme is not allowed (see SsrfGuard)
  kTooManyRedirects,  // follow_redirects was set and the hop limit (3) was exceeded
  kCancelled,         // the transport shut down before the exchange ended
  kOther,             // anything else (bad URL, out of memory, protocol error); see message
};

// "none", "dns", "connect_refused", ... (stable, used in metrics labels and logs).
const char* TransportErrorName(TransportError error);

// True when a deadline (connect, first byte, total) or the low-speed cut ended the exchange.
bool IsTimeout(TransportError error);

// Times measured from Send(). Zero when the phase was not reached.
struct HttpTimings {
  std::chrono::microseconds connect{0};     // connection (and TLS) ready
  std::chrono::microseconds first_byte{0};  // first response byte
  std::chrono::microseconds total{0};       // callback about to run
};

struct HttpResponse {
  TransportError error = TransportError::kNone;
  std::string error_message;  // empty when error == kNone

  int status = 0;       // 0 when no status line arrived
  HttpHeaders headers;  // of the final response, in arrival order, names as sent
  std::string body;     // at most TransportOptions::max_body_bytes
  bool body_truncated = false;
  HttpTimings timings;
  std::string remote_address;  // the address actually connected to, when known
  int redirects_followed = 0;

  bool ok() const { return error == TransportError::kNone; }
  // The first header with this name (ASCII case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
};

// Thread-safety: Send() and InFlight() may be called from any thread. Callbacks run on the event
// loop thread that drives the implementation, never inside Send(); each Send() gets exactly one
// callback. Shutdown() and destruction belong to the event loop thread (or happen after the loop
// has stopped).
class Transport {
 public:
  using DoneCallback = std::function<void(HttpResponse)>;

  virtual ~Transport() = default;

  // Starts one exchange. `done` runs exactly once, with either a response (error kNone, any status)
  // or an error kind and message.
  virtual void Send(HttpRequest request, DoneCallback done) = 0;

  // Exchanges started and not yet completed (their callbacks not yet run).
  virtual size_t InFlight() const = 0;

  // Ends every exchange in flight with kCancelled (their callbacks run before this returns) and
  // makes later Send() calls complete with kCancelled. Idempotent.
  virtual void Shutdown() = 0;
};

}  // namespace bulkhead
