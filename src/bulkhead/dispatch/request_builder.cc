#include "bulkhead/dispatch/request_builder.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <thread>
#include <utility>

namespace bulkhead {

RequestBuilder::RequestBuilder(boost::asio::io_context& io, size_t threads, BuildFn build)
    : io_(io), build_(std::move(build)), pool_(std::max<size_t>(1, threads)) {}

RequestBuilder::~RequestBuilder() {
  pool_.stop();
  pool_.join();
}

void RequestBuilder::Build(DeliveryJob job, Done done) {
  ++*pending_;
  boost::asio::post(
      pool_, [this, job = std::move(job), done = std::move(done), pending = pending_]() mutable {
        // Named for top -H and perf: the signatures' CPU shows apart from the loop's.
        static thread_local bool named = pthread_setname_np(pthread_self(), "bulkhead-crypto") == 0;
        (void)named;
        Result<HttpRequest> request = build_(job);
        // Back on the loop; `pending` (not `this`) is what the handler touches, so a result posted
        // just before the builder went away is still safe to count.
        boost::asio::post(
            io_, [pending, done = std::move(done), request = std::move(request)]() mutable {
              --*pending;
              done(std::move(request));
            });
      });
}

size_t RequestBuilderThreads(int configured) {
  if (configured > 0) return static_cast<size_t>(configured);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<size_t>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace bulkhead
