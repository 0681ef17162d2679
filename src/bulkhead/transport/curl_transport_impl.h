// CurlTransport::Impl: the state behind CurlTransport and the members that drive it. Internal to
// the transport module (callers include curl_transport.h only). Its members are defined by concept:
//   curl_transport.cc      setup and teardown, the life of an exchange (Send to its callback)
//   curl_address_check.cc  the URL and address checks, name resolution, the open-socket hook
//   curl_request_setup.cc  one attempt's easy handle: options, deadlines, pinning, method, headers
//   curl_response.cc       libcurl's response callbacks, timings, outcome, redirects
//   curl_event_loop.cc     per-origin multi handles, sockets and timers on the asio loop
//   curl_tls_sessions.cc   per-origin TLS session caches (libcurl share handles) kept across
//                          connections and multi handles
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bulkhead/transport/curl_transport.h"
#include "bulkhead/transport/curl_url.h"
#include "bulkhead/transport/host_resolver.h"
#include "bulkhead/transport/ip_address.h"
#include "bulkhead/transport/ssrf_guard.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The implementation. Everything below runs on the loop thread unless it says otherwise.
//
// Lifetime of asio handlers: each handler captures a weak_ptr to alive_, which dies with the Impl;
// a handler that finds it expired returns without touching anything. Per-exchange handlers also
// capture the exchange id and attempt number and do nothing when the exchange has moved on.
class CurlTransport::Impl {
 public:
  using Clock = std::chrono::steady_clock;

  Impl(boost::asio::io_context& io, TransportOptions options)
      : io_(io),
        options_(std::move(options)),
        guard_(options_.ssrf),
        resolver_(io.get_executor(), options_.resolver) {}

  ~Impl();

  Status Init();
  void Send(HttpRequest request, DoneCallback done);
  void Shutdown();
  size_t InFlight() const { return in_flight_.load(); }
  size_t OpenSockets() const { return sockets_.size(); }
  size_t ActiveOrigins() const { return multis_.size(); }
  size_t TlsSessionScans() const { return tls_session_scans_; }
  size_t TlsSessionOrigins() const { return tls_sessions_.size(); }

 private:
  // One libcurl multi handle per origin (scheme://host:port), with its own connection cache and
  // timer. libcurl 7.88 walks a multi's whole connection cache on every curl_multi_remove_handle
  // after a reusable transfer (close_connect_only), so one shared multi would make every healthy
  // completion pay for each connection held open to a stuck host. Per-origin multis keep that
  // cost, and any other per-cache walk inside libcurl, within the origin that causes it.
  struct HostMulti {
    explicit HostMulti(boost::asio::io_context& io) : timer(io), idle_timer(io) {}
    Impl* impl = nullptr;
    std::string origin;
    CURLM* multi = nullptr;
    boost::asio::steady_timer timer;  // libcurl's timer for this multi
    boost::asio::steady_timer
        idle_timer;     // closes the multi once no exchange has used it for a while
    size_t active = 0;  // easy handles attached
    // libcurl asked to be driven "now" (timeout 0): a posted SocketAction is pending, instead of
    // re-arming the timer (a timerfd_settime) for every such request.
    bool run_now_posted = false;
  };

  // The TLS session cache of one origin: a libcurl share handle with CURL_LOCK_DATA_SSL_SESSION
  // that every easy handle sent to the origin uses, so that a new connection to it resumes the
  // session of an earlier one (another handle, an earlier multi). All on the loop thread, so no
  // lock functions (libcurl's share rules: locks only when handles run on several threads).
  struct TlsSessions {
    CURLSH* share = nullptr;
    uint64_t last_used = 0;  // TlsSessionsFor's counter, for evicting the least recently used
  };

  // One socket libcurl asked us to watch.
  struct Socket {
    explicit Socket(boost::asio::io_context& io) : descriptor(io) {}
    boost::asio::posix::stream_descriptor descriptor;
    curl_socket_t fd = CURL_SOCKET_BAD;
    HostMulti* owner = nullptr;  // the multi whose connection this is
    int wanted = 0;              // CURL_POLL_IN / CURL_POLL_OUT bits
    bool read_outstanding = false;
    bool write_outstanding = false;
    bool opened_by_us = false;  // created in OnOpenSocket, so closed through OnCloseSocket
    bool closed = false;
  };

  // One exchange, from Send() to its callback, across redirects.
  struct Exchange {
    Exchange(boost::asio::io_context& io) : total_timer(io), phase_timer(io) {}
    ~Exchange() { ReleaseCurl(); }

    void ReleaseCurl() {
      if (easy != nullptr) impl->RecycleEasy(easy);
      easy = nullptr;
      curl_slist_free_all(header_list);
      header_list = nullptr;
      curl_slist_free_all(resolve_list);
      resolve_list = nullptr;
    }

    Impl* impl = nullptr;
    uint64_t id = 0;
    int attempt = 0;  // bumps per redirect hop; stale handlers compare it
    HttpRequest request;
    DoneCallback done;
    Clock::time_point start;
    boost::asio::steady_timer total_timer;
    boost::asio::steady_timer phase_timer;  // DNS deadline, then first-byte deadline

    // The current attempt.
    bool resolving = false;
    CURL* easy = nullptr;
    HostMulti* hm = nullptr;  // set while easy is attached
    curl_slist* header_list = nullptr;
    curl_slist* resolve_list = nullptr;
    char errbuf[CURL_ERROR_SIZE] = {0};
    bool connected = false;
    bool got_first_byte = false;
    bool request_sent = false;  // the whole body was handed to the connection (first-byte clock)
    bool cut_for_size = false;
    size_t body_bytes_seen = 0;
    std::string ssrf_refusal;  // set when OnOpenSocket refused an address
    HttpResponse response;
  };

  // libcurl callbacks (C ABI; they never throw and never complete an exchange).
  static int OnSocket(CURL* easy, curl_socket_t fd, int what, void* userp, void* socketp);
  static int OnTimer(CURLM* multi, long timeout_ms, void* userp);
  static curl_socket_t OnOpenSocket(void* clientp, curlsocktype purpose, curl_sockaddr* address);
  static int OnCloseSocket(void* clientp, curl_socket_t fd);
  static int OnPrereq(void* clientp, char* primary_ip, char* local_ip, int primary_port,
                      int local_port);
  static size_t OnHeader(char* data, size_t size, size_t count, void* userp);
  static size_t OnWrite(char* data, size_t size, size_t count, void* userp);
  static int OnProgress(void* clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                        curl_off_t ulnow);
  // Starts the first-byte deadline of the current attempt of `x` (once the request is sent).
  void ArmFirstByteDeadline(Exchange* x);

  void StartExchange(HttpRequest request, DoneCallback done);
  void StartAttempt(Exchange* x);
  // `url` is the attempt's URL as StartAttempt parsed it.
  void OnResolved(uint64_t id, int attempt, const UrlParts& url,
                  Result<std::vector<IpAddress>> addresses);
  // Starts the attempt on a new easy handle; `pinned` (empty for an IP literal) are the checked
  // addresses of url.host.
  void StartCurl(Exchange* x, const UrlParts& url, const std::vector<IpAddress>& pinned);
  // URL, error buffer, protocols, proxy, HTTP version, TLS verification, keep-alive.
  void SetBaseOptions(CURL* e, Exchange* x, const UrlParts& url);
  // The libcurl callbacks above, bound to `x` (sockets, first byte, headers, body).
  void SetCallbacks(CURL* e, Exchange* x);
  // Attaches `x->easy` to the multi of its origin.
  void AttachToMulti(Exchange* x, const UrlParts& url);
  void OnCurlDone(Exchange* x, CURLcode code);
  HttpResponse ClassifyFailure(Exchange* x, CURLcode code);
  // Follows a redirect response when the request asks for it: returns true when the next attempt
  // has started.
  bool MaybeRedirect(Exchange* x);

  // Ends the exchange: detaches it from libcurl, runs its callback. Never called from inside a
  // libcurl callback.
  void Complete(uint64_t id, HttpResponse response);
  // Completes on a later turn of the loop (keeps callbacks out of Send()).
  void CompleteSoon(uint64_t id, int attempt, HttpResponse response);
  void DetachCurl(Exchange* x);
  // Easy handles are reused (curl_easy_reset) so that a delivery does not allocate libcurl's
  // per-handle buffers again each time.
  CURL* NewEasy();
  void RecycleEasy(CURL* easy);
  Exchange* Find(uint64_t id, int attempt);

  void WatchSocket(const std::shared_ptr<Socket>& s);
  void OnSocketReady(const std::shared_ptr<Socket>& s, int direction,
                     const boost::system::error_code& ec);
  void ForgetSocket(curl_socket_t fd);
  void SocketAction(HostMulti* hm, curl_socket_t fd, int events);
  void DrainMessages(HostMulti* hm);
  Result<HostMulti*> MultiFor(const UrlParts& url);
  // The share handle holding `origin`'s TLS sessions (created on first use; null when libcurl
  // cannot make one: the attempt then runs without resumption).
  CURLSH* TlsSessionsFor(const std::string& origin);
  // Drops the least recently used caches past the bound, never one an attached handle uses nor
  // `keep` (the origin whose cache was just made).
  void TrimTlsSessions(const std::string& keep);
  void MaybeRetire(HostMulti* hm);
  void CleanupMulti(HostMulti* hm);

  std::weak_ptr<int> Alive() const { return alive_; }

  // Constant after construction.
  boost::asio::io_context& io_;
  const TransportOptions options_;
  const SsrfGuard guard_;

  HostResolver resolver_;
  std::unordered_map<std::string, std::unique_ptr<HostMulti>> multis_;
  std::unordered_map<std::string, TlsSessions> tls_sessions_;  // by origin
  uint64_t tls_sessions_clock_ = 0;
  size_t tls_trim_at_ = 0;        // TrimTlsSessions scans once tls_sessions_ is this large
  size_t tls_session_scans_ = 0;  // TrimTlsSessions' walks over tls_sessions_
  std::vector<CURL*> spare_easy_;
  std::unordered_map<curl_socket_t, std::shared_ptr<Socket>> sockets_;
  std::unordered_map<uint64_t, std::unique_ptr<Exchange>> exchanges_;
  uint64_t next_id_ = 1;
  bool shut_down_ = false;
  std::atomic<size_t> in_flight_{0};  // read from any thread
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace bulkhead
