// GuardCounters: how often the server's protections against hostile or broken clients acted.
// Written on the event loop, read by /metrics scrapes on any thread (relaxed atomics).
#pragma once

#include <atomic>
#include <cstdint>

namespace bulkhead {

struct GuardCounters {
  std::atomic<int64_t> login_failures{0};          // HELLO with a wrong password
  std::atomic<int64_t> tls_handshake_failures{0};  // failed or unfinished TLS handshakes
  std::atomic<int64_t> logins_throttled{0};  // HELLO refused unchecked: too soon after failures
  // Connections closed or refused by a limit, by listener and reason.
  std::atomic<int64_t> fwp_fd_limit{0};         // accept failed for lack of descriptors
  std::atomic<int64_t> fwp_max_connections{0};  // refused past max_connections
  std::atomic<int64_t> fwp_unsent_replies{0};   // unsent replies past the hard cap
  std::atomic<int64_t> http_fd_limit{0};
  std::atomic<int64_t> http_max_connections{0};  // refused with 503 at the cap
  std::atomic<int64_t> http_idle_evicted{0};     // idle keep-alive closed to make room

  static void Bump(std::atomic<int64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }
};

}  // namespace bulkhead
