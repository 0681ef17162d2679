// Per-origin TLS session caches. libcurl keeps TLS sessions in the easy handle unless a share
// handle with CURL_LOCK_DATA_SSL_SESSION is set (libcurl, CURLSHOPT_SHARE), and the transport
// recycles easy handles across origins and closes an idle origin's multi handle, so without a share
// a session was never found again. One share handle per origin (libcurl 7.88 keeps 8 sessions per
// share, the least recently used dropped first: a single share for every origin would hold 8
// hosts' sessions), kept for up to max_tls_session_origins origins. Everything runs on the loop
// thread: a share used from one thread needs no lock functions (CURLSHOPT_LOCKFUNC).
#include <curl/curl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bulkhead/transport/curl_transport_impl.h"

namespace bulkhead {

CURLSH* CurlTransport::Impl::TlsSessionsFor(const std::string& origin) {
  if (options_.max_tls_session_origins == 0) return nullptr;
  auto it = tls_sessions_.find(origin);
  if (it == tls_sessions_.end()) {
    CURLSH* share = curl_share_init();
    if (share == nullptr) return nullptr;
    if (curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
      curl_share_cleanup(share);
      return nullptr;
    }
    tls_sessions_.emplace(origin, TlsSessions{share, ++tls_sessions_clock_});
    TrimTlsSessions(origin);  // never the new one, about to be set on a handle
    return share;
  }
  it->second.last_used = ++tls_sessions_clock_;
  return it->second.share;
}

void CurlTransport::Impl::TrimTlsSessions(const std::string& keep) {
  const size_t max = options_.max_tls_session_origins;
  if (tls_sessions_.size() <= max || tls_sessions_.size() < tls_trim_at_) return;
  ++tls_session_scans_;
  // Evict about an eighth at once, so that the scan is paid once per many new origins.
  size_t excess = tls_sessions_.size() - max;
  size_t drop = std::max(excess, max / 8);
  std::vector<std::pair<uint64_t, std::string>> idle;
  for (const auto& [origin, sessions] : tls_sessions_) {
    auto m = multis_.find(origin);
    if (m != multis_.end() && m->second->active > 0) continue;  // handles may use its share
    // No multi handle yet, so it looks idle, but its share is about to be used: while every
    // other origin is in use it would be the only one to drop, freed and then handed out.
    if (origin == keep) continue;
    idle.emplace_back(sessions.last_used, origin);
  }
  drop = std::min(drop, idle.size());
  std::partial_sort(idle.begin(), idle.begin() + drop, idle.end());
  for (size_t i = 0; i < drop; ++i) {
    auto it = tls_sessions_.find(idle[i].second);
    curl_share_cleanup(it->second.share);
    tls_sessions_.erase(it);
  }
  // The next scan waits until the bound is passed again and, when this one left more than the
  // bound (origins in use are never dropped), until an eighth more origins were added: with
  // thousands of origins in flight at once (15,000 never-answering hosts, docs/benchmarks.md)
  // each new origin would otherwise walk them all, quadratic work on the loop.
  const size_t now = tls_sessions_.size();
  tls_trim_at_ = std::max(max + 1, now + std::max<size_t>(1, now / 8));
}

}  // namespace bulkhead
