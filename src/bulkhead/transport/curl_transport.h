// CurlTransport: the real Transport. One libcurl multi handle driven by a Boost.Asio io_context
// through the socket-action API: every socket is an asio descriptor waited on for readiness, and
// libcurl's timer is one asio steady_timer. Thousands of exchanges share one thread; a host that
// never answers costs a socket and a timer, never a thread.
//
// Each origin (scheme://host:port) gets its own multi handle, connection cache and timer, so that
// libcurl's per-cache bookkeeping for a host with thousands of stuck connections is paid by that
// host only. Per exchange: the URL's scheme and every address of its host are checked by SsrfGuard
// (names are resolved by HostResolver off the loop), then libcurl is pinned to the checked
// addresses with CURLOPT_RESOLVE and every socket it opens is checked again, so it cannot reach
// anything else. Connections are reused per host (HTTP/1.1 keep-alive, HTTP/2 multiplexing where
// offered); TLS peers are always verified. TLS sessions are kept per origin across connections and
// multi handles (a libcurl share handle per origin), so a new connection to a host seen before
// resumes its session instead of a full handshake.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "bulkhead/transport/host_resolver.h"
#include "bulkhead/transport/ssrf_guard.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/status.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace bulkhead {

struct TransportOptions {
  SsrfPolicy ssrf;
  // Response bytes kept in HttpResponse::body; later bytes are read and dropped (body_truncated).
  size_t max_body_bytes = 64 * 1024;
  // A response body longer than this is cut off (the response is still reported, truncated), so a
  // fast endless body cannot hold a connection until the total deadline.
  size_t max_drain_bytes = 1024 * 1024;
  // Open connections per host:port (CURLMOPT_MAX_HOST_CONNECTIONS); further exchanges to that host
  // wait inside libcurl for a free connection (still bound by their total deadline). The delivery
  // compartment caps concurrency per host well below this; 0 = no limit.
  long max_connections_per_host = 64;
  // Streams per HTTP/2 connection at most (CURLMOPT_MAX_CONCURRENT_STREAMS); the server's own
  // SETTINGS_MAX_CONCURRENT_STREAMS lowers it (APNs grants up to 1000 once a provider is known).
  long max_concurrent_streams = 1000;
  // Origins whose TLS sessions are kept for resumption (one libcurl share handle each, up to 8
  // sessions, kept after the origin's connections and multi handle are closed); the least recently
  // used beyond this are dropped, never one in use (while most are, up to an eighth more are kept
  // before the next look for ones to drop). 0: no session kept across easy handles.
  size_t max_tls_session_origins = 4096;
  // An origin (scheme://host:port) with nothing in flight for this long closes its idle
  // connections and its libcurl multi handle.
  std::chrono::milliseconds idle_origin_timeout{60'000};
  // A PEM CA bundle trusted instead of the system's (config `delivery_ca_file`, the local TLS test
  // server); empty: the system's. Peers and host names are verified either way.
  std::string ca_file;
  HostResolverOptions resolver;
};

// Thread-safety: Send() and InFlight() may be called from any thread (Send from another thread
// posts to the loop). Everything else happens on the thread running `io`: callbacks, Shutdown(),
// destruction (or destruction after `io` has stopped). `io` must outlive the transport. Destroying
// the transport cancels what is in flight: callbacks run with kCancelled before the destructor
// returns.
class CurlTransport final : public Transport {
 public:
  // InvalidArgument/Internal when libcurl cannot be set up.
  static Result<std::unique_ptr<CurlTransport>> Create(boost::asio::io_context& io,
                                                       TransportOptions options);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  // Transport:
  void Send(HttpRequest request, DoneCallback done) override;
  size_t InFlight() const override;
  void Shutdown() override;

  // Sockets currently registered with the loop (open connections, idle ones included).
  size_t OpenSockets() const;
  // Origins with a libcurl multi handle (in use, or idle and not yet retired).
  size_t ActiveOrigins() const;
  // Origins whose TLS session cache is kept, and the walks over them looking for ones to drop.
  size_t TlsSessionOrigins() const;
  size_t TlsSessionScans() const;

 private:
  class Impl;
  explicit CurlTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bulkhead
