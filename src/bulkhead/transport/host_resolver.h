// HostResolver: name resolution that never blocks the event loop. getaddrinfo runs on a small pool
// of worker threads and the result is posted back to the loop's executor.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bulkhead/transport/ip_address.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct HostResolverOptions {
  // Worker threads, started on first use. A lookup that hangs in the system resolver holds one
  // thread; concurrent lookups of one name share one thread.
  size_t threads = 2;
  // Successful answers are reused for this long (getaddrinfo gives no TTL). 0 = no cache.
  std::chrono::milliseconds cache_ttl{30'000};
};

// Thread-safety: Resolve() may be called from any thread; callbacks are posted to the executor
// given at construction, never run inside Resolve(). The destructor waits for lookups already
// running in the system resolver (bounded by its own timeouts) and drops callbacks not yet posted.
class HostResolver {
 public:
  using Callback = std::function<void(Result<std::vector<IpAddress>>)>;

  HostResolver(boost::asio::any_io_executor executor, HostResolverOptions options);
  ~HostResolver();
  HostResolver(const HostResolver&) = delete;
  HostResolver& operator=(const HostResolver&) = delete;

  // Resolves `host` (a name, without brackets) to its IPv4 and IPv6 addresses, deduplicated,
  // in the system resolver's order. NotFound when the name does not exist or has no address,
  // Unavailable for temporary failures.
  void Resolve(std::string host, Callback done);

 private:
  struct CacheEntry {
    std::vector<IpAddress> addresses;
    std::chrono::steady_clock::time_point expires;
  };

  void WorkerLoop();
  static Result<std::vector<IpAddress>> LookUp(const std::string& host);

  // Constant after construction.
  const boost::asio::any_io_executor executor_;
  const HostResolverOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                                 // guarded by mu_
  std::deque<std::string> queue_;                         // guarded by mu_
  std::map<std::string, std::vector<Callback>> waiting_;  // guarded by mu_; one entry per lookup
  std::map<std::string, CacheEntry> cache_;               // guarded by mu_
  std::vector<std::thread> workers_;                      // guarded by mu_
  size_t idle_ = 0;  // workers waiting for work; guarded by mu_
};

}  // namespace bulkhead
