#include "bulkhead/transport/curl_transport.h"

#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bulkhead/util/ascii.h"

namespace bulkhead {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

constexpr int kMaxRedirects = 3;

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// The parts of a URL the guard needs, as libcurl's own parser sees them.
struct UrlParts {
  std::string scheme;
  std::string host;  // without brackets
  long port = 0;
};

Result<UrlParts> ParseUrl(const std::string& url) {
  CURLU* u = curl_url();
  if (u == nullptr) return Status::Internal("out of memory");
  UrlParts parts;
  CURLUcode rc = curl_url_set(u, CURLUPART_URL, url.c_str(), 0);
  char* part = nullptr;
  if (rc == CURLUE_OK) rc = curl_url_get(u, CURLUPART_SCHEME, &part, 0);
  if (rc == CURLUE_OK) {
    parts.scheme = part;
    curl_free(part);
    part = nullptr;
    rc = curl_url_get(u, CURLUPART_HOST, &part, 0);
  }
  if (rc == CURLUE_OK) {
    std::string_view host = part;
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    parts.host = std::string(host);
    curl_free(part);
    part = nullptr;
    rc = curl_url_get(u, CURLUPART_PORT, &part, CURLU_DEFAULT_PORT);
  }
  if (rc == CURLUE_OK) {
    parts.port = std::strtol(part, nullptr, 10);
    curl_free(part);
    part = nullptr;
    if (curl_url_get(u, CURLUPART_ZONEID, &part, 0) == CURLUE_OK) {
      curl_free(part);
      curl_url_cleanup(u);
      return Status::InvalidArgument("URL with an IPv6 zone id refused: " + url);
    }
  }
  curl_url_cleanup(u);
  if (rc != CURLUE_OK) {
    return Status::InvalidArgument(std::string("bad URL '") + url + "': " + curl_url_strerror(rc));
  }
  return parts;
}

HttpResponse ErrorResponse(TransportError error, std::string message) {
  HttpResponse r;
  r.error = error;
  r.error_message = std::move(message);
  return r;
}

}  // namespace

// The implementation. Everything below runs on the loop thread unless it says otherwise.
//
// Lifetime of asio handlers: each handler captures a weak_ptr to alive_, which dies with the Impl;
// a handler that finds it expired returns without touching anything. Per-exchange handlers also
// capture the exchange id and attempt number and do nothing when the exchange has moved on.
class CurlTransport::Impl {
 public:
  Impl(asio::io_context& io, TransportOptions options)
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

 private:
  // One libcurl multi handle per origin (scheme://host:port), with its own connection cache and
  // timer. libcurl 7.88 walks a multi's whole connection cache on every curl_multi_remove_handle
  // after a reusable transfer (close_connect_only), so one shared multi would make every healthy
  // completion pay for each connection held open to a stuck host. Per-origin multis keep that
  // cost, and any other per-cache walk inside libcurl, within the origin that causes it.
  struct HostMulti {
    explicit HostMulti(asio::io_context& io) : timer(io), idle_timer(io) {}
    Impl* impl = nullptr;
    std::string origin;
    CURLM* multi = nullptr;
    asio::steady_timer timer;       // libcurl's timer for this multi
    asio::steady_timer idle_timer;  // closes the multi once no exchange has used it for a while
    size_t active = 0;              // easy handles attached
  };

  // One socket libcurl asked us to watch.
  struct Socket {
    explicit Socket(asio::io_context& io) : descriptor(io) {}
    asio::posix::stream_descriptor descriptor;
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
    Exchange(asio::io_context& io) : total_timer(io), phase_timer(io) {}
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
    asio::steady_timer total_timer;
    asio::steady_timer phase_timer;  // DNS deadline, then first-byte deadline

    // The current attempt.
    bool resolving = false;
    CURL* easy = nullptr;
    HostMulti* hm = nullptr;  // set while easy is attached
    curl_slist* header_list = nullptr;
    curl_slist* resolve_list = nullptr;
    char errbuf[CURL_ERROR_SIZE] = {0};
    bool connected = false;
    bool got_first_byte = false;
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

  void StartExchange(HttpRequest request, DoneCallback done);
  void StartAttempt(Exchange* x);
  void OnResolved(uint64_t id, int attempt, const std::string& host, long port,
                  Result<std::vector<IpAddress>> addresses);
  void StartCurl(Exchange* x, const UrlParts& url, const std::vector<IpAddress>& pinned);
  void OnCurlDone(Exchange* x, CURLcode code);
  HttpResponse ClassifyFailure(Exchange* x, CURLcode code);
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
  void MaybeRetire(HostMulti* hm);
  void CleanupMulti(HostMulti* hm);

  std::weak_ptr<int> Alive() const { return alive_; }

  // Constant after construction.
  asio::io_context& io_;
  const TransportOptions options_;
  const SsrfGuard guard_;

  HostResolver resolver_;
  std::unordered_map<std::string, std::unique_ptr<HostMulti>> multis_;
  std::vector<CURL*> spare_easy_;
  std::unordered_map<curl_socket_t, std::shared_ptr<Socket>> sockets_;
  std::unordered_map<uint64_t, std::unique_ptr<Exchange>> exchanges_;
  uint64_t next_id_ = 1;
  bool shut_down_ = false;
  std::atomic<size_t> in_flight_{0};  // read from any thread
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

// ---- setup and teardown -------------------------------------------------------------------------

Status CurlTransport::Impl::Init() {
  GlobalInitOnce();
  CURLM* probe = curl_multi_init();
  if (probe == nullptr) return Status::Internal("curl_multi_init failed");
  curl_multi_cleanup(probe);
  return Status::Ok();
}

Result<CurlTransport::Impl::HostMulti*> CurlTransport::Impl::MultiFor(const UrlParts& url) {
  std::string origin;
  for (char c : url.scheme + "://" + url.host + ":" + std::to_string(url.port)) {
    origin += char(std::tolower(static_cast<unsigned char>(c)));
  }
  auto it = multis_.find(origin);
  if (it != multis_.end()) {
    it->second->idle_timer.cancel();
    return it->second.get();
  }
  auto hm = std::make_unique<HostMulti>(io_);
  hm->impl = this;
  hm->origin = origin;
  hm->multi = curl_multi_init();
  if (hm->multi == nullptr) return Status::ResourceExhausted("curl_multi_init failed");
  CURLM* m = hm->multi;
  curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
  curl_multi_setopt(m, CURLMOPT_SOCKETDATA, hm.get());
  curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, &Impl::OnTimer);
  curl_multi_setopt(m, CURLMOPT_TIMERDATA, hm.get());
  curl_multi_setopt(m, CURLMOPT_PIPELINING, long{CURLPIPE_MULTIPLEX});
  curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_connections_per_host);
  HostMulti* raw = hm.get();
  multis_.emplace(origin, std::move(hm));
  return raw;
}

// An origin nobody has used for a while gives back its idle connections and its multi.
void CurlTransport::Impl::MaybeRetire(HostMulti* hm) {
  if (hm->active > 0) return;
  hm->idle_timer.expires_after(options_.idle_origin_timeout);
  hm->idle_timer.async_wait(
      [this, alive = Alive(), origin = hm->origin](const boost::system::error_code& ec) {
        if (ec || alive.expired()) return;
        auto it = multis_.find(origin);
        if (it == multis_.end() || it->second->active > 0) return;
        std::unique_ptr<HostMulti> owned = std::move(it->second);
        multis_.erase(it);
        CleanupMulti(owned.get());
      });
}

void CurlTransport::Impl::CleanupMulti(HostMulti* hm) {
  if (hm->multi != nullptr) curl_multi_cleanup(hm->multi);  // closes via OnCloseSocket
  hm->multi = nullptr;
  hm->timer.cancel();
  hm->idle_timer.cancel();
  // Sockets libcurl did not close through us (none expected) stop being watched.
  std::vector<curl_socket_t> left;
  for (auto& [fd, s] : sockets_) {
    if (s->owner == hm) left.push_back(fd);
  }
  for (curl_socket_t fd : left) ForgetSocket(fd);
}

CurlTransport::Impl::~Impl() {
  Shutdown();
  // Callbacks run by Shutdown() may have started exchanges; they are cancelled too.
  while (!exchanges_.empty()) {
    std::vector<uint64_t> ids;
    for (auto& [id, x] : exchanges_) ids.push_back(id);
    for (uint64_t id : ids) {
      Complete(id, ErrorResponse(TransportError::kCancelled, "transport shut down"));
    }
  }
  for (auto& [origin, hm] : multis_) CleanupMulti(hm.get());
  multis_.clear();
  boost::system::error_code ignored;
  for (auto& [fd, s] : sockets_) {
    s->closed = true;
    s->descriptor.cancel(ignored);
    s->descriptor.release();  // libcurl owns the descriptor; never close it here
  }
  sockets_.clear();
  for (CURL* e : spare_easy_) curl_easy_cleanup(e);
  spare_easy_.clear();
  alive_.reset();
}

void CurlTransport::Impl::Shutdown() {
  shut_down_ = true;
  std::vector<uint64_t> ids;
  for (auto& [id, x] : exchanges_) ids.push_back(id);
  for (uint64_t id : ids) {
    Complete(id, ErrorResponse(TransportError::kCancelled, "transport shut down"));
  }
}

// ---- exchanges ----------------------------------------------------------------------------------

void CurlTransport::Impl::Send(HttpRequest request, DoneCallback done) {
  in_flight_.fetch_add(1);
  if (io_.get_executor().running_in_this_thread()) {
    StartExchange(std::move(request), std::move(done));
    return;
  }
  asio::post(
      io_, [this, alive = Alive(), request = std::move(request), done = std::move(done)]() mutable {
        if (alive.expired()) {
          done(ErrorResponse(TransportError::kCancelled, "transport shut down"));
          return;
        }
        StartExchange(std::move(request), std::move(done));
      });
}

void CurlTransport::Impl::StartExchange(HttpRequest request, DoneCallback done) {
  auto owned = std::make_unique<Exchange>(io_);
  Exchange* x = owned.get();
  x->impl = this;
  x->id = next_id_++;
  x->request = std::move(request);
  x->done = std::move(done);
  x->start = Clock::now();
  exchanges_.emplace(x->id, std::move(owned));
  if (shut_down_) {
    CompleteSoon(x->id, x->attempt,
                 ErrorResponse(TransportError::kCancelled, "transport shut down"));
    return;
  }
  milliseconds total = x->request.deadlines.total;
  if (total.count() <= 0) total = milliseconds(30'000);
  x->total_timer.expires_after(total);
  x->total_timer.async_wait(
      [this, alive = Alive(), id = x->id, total](const boost::system::error_code& ec) {
        if (ec || alive.expired() || exchanges_.count(id) == 0) return;
        Complete(id, ErrorResponse(TransportError::kTimeoutTotal,
                                   "no complete response within the total deadline of " +
                                       std::to_string(total.count()) + " ms"));
      });
  StartAttempt(x);
}

void CurlTransport::Impl::StartAttempt(Exchange* x) {
  Result<UrlParts> url = ParseUrl(x->request.url);
  if (!url.ok()) {
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kOther, url.status().message()));
    return;
  }
  if (Status s = guard_.CheckScheme(url->scheme); !s.ok()) {
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kSsrfRefused, s.message()));
    return;
  }
  if (std::optional<IpAddress> literal = IpAddress::Parse(url->host)) {
    if (Status s = guard_.CheckAddress(*literal); !s.ok()) {
      CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kSsrfRefused, s.message()));
      return;
    }
    StartCurl(x, *url, {});
    return;
  }
  // A name: resolve off the loop, within the connect budget.
  x->resolving = true;
  milliseconds budget = x->request.deadlines.connect;
  if (budget.count() > 0) {
    x->phase_timer.expires_after(budget);
    x->phase_timer.async_wait([this, alive = Alive(), id = x->id, attempt = x->attempt,
                               host = url->host, budget](const boost::system::error_code& ec) {
      if (ec || alive.expired()) return;
      Exchange* x = Find(id, attempt);
      if (x == nullptr || !x->resolving) return;
      Complete(id,
               ErrorResponse(TransportError::kDns, "resolving '" + host +
                                                       "' took longer than the connect deadline (" +
                                                       std::to_string(budget.count()) + " ms)"));
    });
  }
  resolver_.Resolve(url->host,
                    [this, alive = Alive(), id = x->id, attempt = x->attempt, host = url->host,
                     port = url->port](Result<std::vector<IpAddress>> addresses) {
                      if (alive.expired()) return;
                      OnResolved(id, attempt, host, port, std::move(addresses));
                    });
}

void CurlTransport::Impl::OnResolved(uint64_t id, int attempt, const std::string& host, long port,
                                     Result<std::vector<IpAddress>> addresses) {
  Exchange* x = Find(id, attempt);
  if (x == nullptr || !x->resolving) return;
  x->resolving = false;
  x->phase_timer.cancel();
  if (!addresses.ok()) {
    Complete(id, ErrorResponse(TransportError::kDns, addresses.status().message()));
    return;
  }
  // Every address must pass: a name with one private address among public ones is refused, so
  // that a rebinding answer cannot slip through on a later connection attempt.
  for (const IpAddress& a : *addresses) {
    if (Status s = guard_.CheckAddress(a); !s.ok()) {
      Complete(id,
               ErrorResponse(TransportError::kSsrfRefused,
                             "host '" + host + "' resolves to a refused address: " + s.message()));
      return;
    }
  }
  Result<UrlParts> url = ParseUrl(x->request.url);
  if (!url.ok()) {
    Complete(id, ErrorResponse(TransportError::kOther, url.status().message()));
    return;
  }
  StartCurl(x, *url, *addresses);
}

void CurlTransport::Impl::StartCurl(Exchange* x, const UrlParts& url,
                                    const std::vector<IpAddress>& pinned) {
  CURL* e = NewEasy();
  if (e == nullptr) {
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kOther, "curl_easy_init failed"));
    return;
  }
  x->easy = e;
  x->connected = false;
  x->got_first_byte = false;
  x->cut_for_size = false;
  x->body_bytes_seen = 0;
  x->ssrf_refusal.clear();
  x->errbuf[0] = '\0';
  const HttpRequest& r = x->request;
  const Deadlines& d = r.deadlines;

  curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, x);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, guard_.CurlProtocols());
  curl_easy_setopt(e, CURLOPT_PROXY, "");  // never take a proxy from the environment
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_2TLS});
  if (EqualsIgnoreCase(url.scheme, "https")) {
    // Wait for a connection that may multiplex rather than open another one to the same host.
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  }
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_file_for_tests.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_file_for_tests.c_str());
  }
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);

  // Deadlines. The total deadline is our own timer (it covers resolution and waiting for a
  // connection slot); libcurl's is a backstop slightly later.
  if (d.connect.count() > 0)
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long(d.connect.count()));
  auto elapsed = duration_cast<milliseconds>(Clock::now() - x->start);
  long remaining = std::max<long>(1, long((d.total - elapsed).count()));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, remaining + 50);
  if (d.low_speed_limit > 0 && d.low_speed_time.count() > 0) {
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, long(d.low_speed_limit));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, long(d.low_speed_time.count()));
  }

  // Sockets: opened and closed by us so that each is checked and registered with the loop.
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Impl::OnOpenSocket);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &Impl::OnCloseSocket);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &Impl::OnPrereq);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, x);

  // Pin the name to the addresses that were checked.
  if (!pinned.empty()) {
    std::string entry = url.host + ":" + std::to_string(url.port) + ":";
    for (size_t i = 0; i < pinned.size(); ++i) {
      if (i > 0) entry += ",";
      entry += pinned[i].ToUriString();
    }
    x->resolve_list = curl_slist_append(nullptr, entry.c_str());
    curl_easy_setopt(e, CURLOPT_RESOLVE, x->resolve_list);
  }

  // Method, body, headers.
  const std::string& m = r.method;
  if (EqualsIgnoreCase(m, "HEAD")) {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (EqualsIgnoreCase(m, "POST") || !r.body.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(r.body.size()));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
    if (!EqualsIgnoreCase(m, "POST")) curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m.c_str());
  } else if (!EqualsIgnoreCase(m, "GET")) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m.c_str());
  }
  curl_slist* headers = curl_slist_append(nullptr, "Expect:");
  for (const HttpHeader& h : r.headers) {
    std::string line = h.name + (h.value.empty() ? ";" : ": " + h.value);
    headers = curl_slist_append(headers, line.c_str());
  }
  x->header_list = headers;
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);

  Result<HostMulti*> hm = MultiFor(url);
  if (!hm.ok()) {
    x->ReleaseCurl();
    CompleteSoon(x->id, x->attempt, ErrorResponse(TransportError::kOther, hm.status().message()));
    return;
  }
  CURLMcode rc = curl_multi_add_handle((*hm)->multi, e);
  if (rc == CURLM_OK) {
    x->hm = *hm;
    ++x->hm->active;
  } else {
    x->ReleaseCurl();
    MaybeRetire(*hm);
    CompleteSoon(x->id, x->attempt,
                 ErrorResponse(TransportError::kOther,
                               std::string("curl_multi_add_handle: ") + curl_multi_strerror(rc)));
  }
}

void CurlTransport::Impl::OnCurlDone(Exchange* x, CURLcode code) {
  CURL* e = x->easy;
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  char* ip = nullptr;
  if (curl_easy_getinfo(e, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip != nullptr && *ip) {
    x->response.remote_address = ip;
  }
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && x->cut_for_size)) {
    x->response.status = int(status);
    x->response.error = TransportError::kNone;
    x->response.error_message.clear();
    if (MaybeRedirect(x)) return;
    Complete(x->id, std::move(x->response));
    return;
  }
  HttpResponse failure = ClassifyFailure(x, code);
  failure.status = int(status);
  failure.remote_address = x->response.remote_address;
  failure.timings = x->response.timings;
  failure.redirects_followed = x->response.redirects_followed;
  Complete(x->id, std::move(failure));
}

HttpResponse CurlTransport::Impl::ClassifyFailure(Exchange* x, CURLcode code) {
  long os_errno = 0;
  curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os_errno);
  std::string detail = x->errbuf[0] != '\0' ? std::string(x->errbuf) : curl_easy_strerror(code);
  bool reset_errno = os_errno == ECONNRESET || os_errno == EPIPE;
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      if (!x->ssrf_refusal.empty()) {
        return ErrorResponse(TransportError::kSsrfRefused, x->ssrf_refusal);
      }
      return ErrorResponse(TransportError::kConnectRefused, detail);
    case CURLE_COULDNT_RESOLVE_HOST:
      return ErrorResponse(TransportError::kDns, detail);
    case CURLE_OPERATION_TIMEDOUT:
      if (!x->connected) return ErrorResponse(TransportError::kConnectTimeout, detail);
      if (detail.find("too slow") != std::string::npos) {
        return ErrorResponse(TransportError::kLowSpeed, detail);
      }
      return ErrorResponse(TransportError::kTimeoutTotal, detail);
    case CURLE_SSL_CONNECT_ERROR:
      if (reset_errno) return ErrorResponse(TransportError::kReset, detail);
      return ErrorResponse(TransportError::kTls, detail);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
      return ErrorResponse(TransportError::kTls, detail);
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2_STREAM:
      return ErrorResponse(TransportError::kReset, detail);
    case CURLE_UNSUPPORTED_PROTOCOL:
      return ErrorResponse(TransportError::kSsrfRefused, detail);
    default:
      return ErrorResponse(TransportError::kOther,
                           std::string(curl_easy_strerror(code)) + ": " + detail);
  }
}

bool CurlTransport::Impl::MaybeRedirect(Exchange* x) {
  int status = x->response.status;
  bool is_redirect =
      status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
  if (!x->request.follow_redirects || !is_redirect) return false;
  char* location = nullptr;
  if (curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &location) != CURLE_OK ||
      location == nullptr) {
    return false;
  }
  if (x->response.redirects_followed >= kMaxRedirects) {
    x->response.error = TransportError::kTooManyRedirects;
    x->response.error_message = "more than " + std::to_string(kMaxRedirects) + " redirects";
    return false;
  }
  std::string next = location;
  Result<UrlParts> from = ParseUrl(x->request.url);
  Result<UrlParts> to = ParseUrl(next);
  bool same_origin = from.ok() && to.ok() && EqualsIgnoreCase(from->scheme, to->scheme) &&
                     EqualsIgnoreCase(from->host, to->host) && from->port == to->port;
  HttpRequest& r = x->request;
  r.url = next;
  if (status == 303 || ((status == 301 || status == 302) && EqualsIgnoreCase(r.method, "POST"))) {
    r.method = "GET";
    r.body.clear();
  }
  if (!same_origin) {
    std::erase_if(r.headers, [](const HttpHeader& h) {
      return EqualsIgnoreCase(h.name, "Authorization") || EqualsIgnoreCase(h.name, "Cookie");
    });
  }
  int followed = x->response.redirects_followed + 1;
  HttpTimings timings = x->response.timings;
  DetachCurl(x);
  x->phase_timer.cancel();
  ++x->attempt;
  x->response = HttpResponse();
  x->response.redirects_followed = followed;
  x->response.timings = timings;
  StartAttempt(x);
  return true;
}

CURL* CurlTransport::Impl::NewEasy() {
  if (spare_easy_.empty()) return curl_easy_init();
  CURL* e = spare_easy_.back();
  spare_easy_.pop_back();
  return e;
}

void CurlTransport::Impl::RecycleEasy(CURL* easy) {
  constexpr size_t kMaxSpare = 256;
  if (spare_easy_.size() >= kMaxSpare || shut_down_) {
    curl_easy_cleanup(easy);
    return;
  }
  curl_easy_reset(easy);
  spare_easy_.push_back(easy);
}

CurlTransport::Impl::Exchange* CurlTransport::Impl::Find(uint64_t id, int attempt) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end() || it->second->attempt != attempt) return nullptr;
  return it->second.get();
}

void CurlTransport::Impl::DetachCurl(Exchange* x) {
  HostMulti* hm = x->hm;
  x->hm = nullptr;
  if (x->easy != nullptr && hm != nullptr) curl_multi_remove_handle(hm->multi, x->easy);
  x->ReleaseCurl();
  if (hm != nullptr) {
    --hm->active;
    MaybeRetire(hm);
  }
}

void CurlTransport::Impl::Complete(uint64_t id, HttpResponse response) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return;
  std::unique_ptr<Exchange> x = std::move(it->second);
  exchanges_.erase(it);
  DetachCurl(x.get());
  x->total_timer.cancel();
  x->phase_timer.cancel();
  if (response.timings.connect.count() == 0) response.timings.connect = x->response.timings.connect;
  if (response.timings.first_byte.count() == 0) {
    response.timings.first_byte = x->response.timings.first_byte;
  }
  if (response.remote_address.empty()) response.remote_address = x->response.remote_address;
  response.redirects_followed =
      std::max(response.redirects_followed, x->response.redirects_followed);
  response.timings.total = duration_cast<microseconds>(Clock::now() - x->start);
  DoneCallback done = std::move(x->done);
  x.reset();
  in_flight_.fetch_sub(1);
  if (done) done(std::move(response));
}

void CurlTransport::Impl::CompleteSoon(uint64_t id, int attempt, HttpResponse response) {
  asio::post(io_, [this, alive = Alive(), id, attempt, response = std::move(response)]() mutable {
    if (alive.expired() || Find(id, attempt) == nullptr) return;
    Complete(id, std::move(response));
  });
}

// ---- libcurl callbacks --------------------------------------------------------------------------

curl_socket_t CurlTransport::Impl::OnOpenSocket(void* clientp, curlsocktype purpose,
                                                curl_sockaddr* address) {
  auto* x = static_cast<Exchange*>(clientp);
  Impl* self = x->impl;
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  // Second line of defence behind CURLOPT_RESOLVE: whatever libcurl connects to is checked.
  std::optional<IpAddress> a = IpAddress::FromSockaddr(&address->addr);
  if (!a) {
    x->ssrf_refusal = "connection to a non-IP address family refused";
    return CURL_SOCKET_BAD;
  }
  if (Status s = self->guard_.CheckAddress(*a); !s.ok()) {
    x->ssrf_refusal = s.message();
    return CURL_SOCKET_BAD;
  }
  int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  auto s = std::make_shared<Socket>(self->io_);
  boost::system::error_code ec;
  s->descriptor.assign(fd, ec);
  if (ec) {
    ::close(fd);
    return CURL_SOCKET_BAD;
  }
  s->fd = fd;
  s->owner = x->hm;
  s->opened_by_us = true;
  self->sockets_[fd] = std::move(s);
  return fd;
}

int CurlTransport::Impl::OnCloseSocket(void* clientp, curl_socket_t fd) {
  auto* self = static_cast<Impl*>(clientp);
  self->ForgetSocket(fd);
  return ::close(fd);
}

int CurlTransport::Impl::OnSocket(CURL* easy, curl_socket_t fd, int what, void* userp,
                                  void* socketp) {
  auto* hm = static_cast<HostMulti*>(userp);
  Impl* self = hm->impl;
  auto it = self->sockets_.find(fd);
  if (what == CURL_POLL_REMOVE) {
    if (it == self->sockets_.end()) return 0;
    it->second->wanted = 0;
    // A socket we did not open gets no close callback: stop watching it now.
    if (!it->second->opened_by_us) self->ForgetSocket(fd);
    return 0;
  }
  std::shared_ptr<Socket> s;
  if (it != self->sockets_.end()) {
    s = it->second;
  } else {
    s = std::make_shared<Socket>(self->io_);
    boost::system::error_code ec;
    s->descriptor.assign(fd, ec);
    if (ec) return -1;
    s->fd = fd;
    self->sockets_[fd] = s;
  }
  s->owner = hm;
  s->wanted = what & (CURL_POLL_IN | CURL_POLL_OUT);
  self->WatchSocket(s);
  return 0;
}

int CurlTransport::Impl::OnTimer(CURLM* multi, long timeout_ms, void* userp) {
  auto* hm = static_cast<HostMulti*>(userp);
  Impl* self = hm->impl;
  if (timeout_ms < 0) {
    hm->timer.cancel();
    return 0;
  }
  hm->timer.expires_after(milliseconds(timeout_ms));
  hm->timer.async_wait(
      [self, hm, alive = self->Alive(), origin = hm->origin](const boost::system::error_code& ec) {
        if (ec || alive.expired()) return;
        auto it = self->multis_.find(origin);
        if (it == self->multis_.end() || it->second.get() != hm) return;
        self->SocketAction(hm, CURL_SOCKET_TIMEOUT, 0);
      });
  return 0;
}

int CurlTransport::Impl::OnPrereq(void* clientp, char* primary_ip, char* local_ip, int primary_port,
                                  int local_port) {
  auto* x = static_cast<Exchange*>(clientp);
  Impl* self = x->impl;
  x->connected = true;
  x->response.timings.connect = duration_cast<microseconds>(Clock::now() - x->start);
  if (primary_ip != nullptr) x->response.remote_address = primary_ip;
  milliseconds first_byte = x->request.deadlines.first_byte;
  if (first_byte.count() > 0 && !x->got_first_byte) {
    x->phase_timer.expires_after(first_byte);
    x->phase_timer.async_wait([self, alive = self->Alive(), id = x->id, attempt = x->attempt,
                               first_byte](const boost::system::error_code& ec) {
      if (ec || alive.expired()) return;
      Exchange* x = self->Find(id, attempt);
      if (x == nullptr || x->got_first_byte || x->easy == nullptr) return;
      self->Complete(id, ErrorResponse(TransportError::kTimeoutFirstByte,
                                       "no response byte within the first-byte deadline of " +
                                           std::to_string(first_byte.count()) + " ms"));
    });
  }
  return CURL_PREREQFUNC_OK;
}

size_t CurlTransport::Impl::OnHeader(char* data, size_t size, size_t count, void* userp) {
  auto* x = static_cast<Exchange*>(userp);
  size_t n = size * count;
  if (!x->got_first_byte) {
    x->got_first_byte = true;
    x->response.timings.first_byte = duration_cast<microseconds>(Clock::now() - x->start);
    x->phase_timer.cancel();
  }
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    x->response.headers.clear();  // a new response (after 1xx, or a new hop)
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  x->response.headers.push_back(HttpHeader{std::string(Trim(line.substr(0, colon))),
                                           std::string(Trim(line.substr(colon + 1)))});
  return n;
}

size_t CurlTransport::Impl::OnWrite(char* data, size_t size, size_t count, void* userp) {
  auto* x = static_cast<Exchange*>(userp);
  const TransportOptions& o = x->impl->options_;
  size_t n = size * count;
  x->body_bytes_seen += n;
  std::string& body = x->response.body;
  if (body.size() < o.max_body_bytes) {
    body.append(data, std::min(n, o.max_body_bytes - body.size()));
  }
  if (x->body_bytes_seen > body.size()) x->response.body_truncated = true;
  if (x->body_bytes_seen > o.max_drain_bytes) {
    x->cut_for_size = true;
    return 0;  // makes libcurl end the transfer with CURLE_WRITE_ERROR
  }
  return n;
}

// ---- sockets and libcurl's clock ----------------------------------------------------------------

void CurlTransport::Impl::WatchSocket(const std::shared_ptr<Socket>& s) {
  if (s->closed) return;
  if ((s->wanted & CURL_POLL_IN) && !s->read_outstanding) {
    s->read_outstanding = true;
    s->descriptor.async_wait(asio::posix::stream_descriptor::wait_read,
                             [this, alive = Alive(), s](const boost::system::error_code& ec) {
                               if (alive.expired()) return;
                               OnSocketReady(s, CURL_POLL_IN, ec);
                             });
  }
  if ((s->wanted & CURL_POLL_OUT) && !s->write_outstanding) {
    s->write_outstanding = true;
    s->descriptor.async_wait(asio::posix::stream_descriptor::wait_write,
                             [this, alive = Alive(), s](const boost::system::error_code& ec) {
                               if (alive.expired()) return;
                               OnSocketReady(s, CURL_POLL_OUT, ec);
                             });
  }
}

void CurlTransport::Impl::OnSocketReady(const std::shared_ptr<Socket>& s, int direction,
                                        const boost::system::error_code& ec) {
  if (direction == CURL_POLL_IN) {
    s->read_outstanding = false;
  } else {
    s->write_outstanding = false;
  }
  if (s->closed || ec == asio::error::operation_aborted) return;
  if (s->wanted & direction) {
    int events =
        ec ? CURL_CSELECT_ERR : (direction == CURL_POLL_IN ? CURL_CSELECT_IN : CURL_CSELECT_OUT);
    SocketAction(s->owner, s->fd, events);
  }
  WatchSocket(s);
}

void CurlTransport::Impl::ForgetSocket(curl_socket_t fd) {
  auto it = sockets_.find(fd);
  if (it == sockets_.end()) return;
  std::shared_ptr<Socket> s = std::move(it->second);
  sockets_.erase(it);
  s->closed = true;
  s->wanted = 0;
  boost::system::error_code ignored;
  s->descriptor.cancel(ignored);
  s->descriptor.release();  // deregisters from the reactor; the caller closes the fd
}

void CurlTransport::Impl::SocketAction(HostMulti* hm, curl_socket_t fd, int events) {
  if (hm == nullptr || hm->multi == nullptr) return;
  int running = 0;
  curl_multi_socket_action(hm->multi, fd, events, &running);
  DrainMessages(hm);
}

void CurlTransport::Impl::DrainMessages(HostMulti* hm) {
  // Collect first: callbacks run from here may start or end other exchanges.
  std::vector<std::pair<uint64_t, CURLcode>> finished;
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(hm->multi, &queued)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Exchange* x = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &x);
    if (x != nullptr) finished.emplace_back(x->id, msg->data.result);
  }
  for (auto [id, code] : finished) {
    auto it = exchanges_.find(id);
    if (it == exchanges_.end() || it->second->easy == nullptr) continue;
    OnCurlDone(it->second.get(), code);
  }
}

// ---- CurlTransport ------------------------------------------------------------------------------

Result<std::unique_ptr<CurlTransport>> CurlTransport::Create(asio::io_context& io,
                                                             TransportOptions options) {
  auto impl = std::make_unique<Impl>(io, std::move(options));
  if (Status s = impl->Init(); !s.ok()) return s;
  return std::unique_ptr<CurlTransport>(new CurlTransport(std::move(impl)));
}

CurlTransport::CurlTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CurlTransport::~CurlTransport() = default;

void CurlTransport::Send(HttpRequest request, DoneCallback done) {
  impl_->Send(std::move(request), std::move(done));
}
size_t CurlTransport::InFlight() const { return impl_->InFlight(); }
void CurlTransport::Shutdown() { impl_->Shutdown(); }
size_t CurlTransport::OpenSockets() const { return impl_->OpenSockets(); }
size_t CurlTransport::ActiveOrigins() const { return impl_->ActiveOrigins(); }

}  // namespace bulkhead
