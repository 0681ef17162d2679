// RequestBuilder: builds the HTTP requests of built-in delivery jobs on worker threads. Building is
// the CPU-heavy step of a delivery (an activitypub job's RSA-2048 signature, a webpush job's P-256
// key agreement and AES-GCM; encoders/), about a third of the event loop's time when it ran there.
// Here it runs on a pool of threads, one per core by default, and each result is posted back to
// the event loop, so the loop never waits for cryptography and signing uses every core.
//
// What runs on the workers is BuildFn (by default BuildDeliveryRequest with the dispatcher's VAPID
// signer, key ring and clock, all thread-safe; the VAPID token stays cached per push service for
// its lifetime inside the signer). Tests inject their own BuildFn (e.g. one that blocks) to prove
// that a slow build of one job does not hold up another.
//
// Threading: Build() and the destructor on the event loop thread; BuildFn on a worker; `done` on
// the loop, never inside Build(). Destruction stops the workers: builds not yet started are
// dropped (their `done` never runs), running ones are waited for (a build takes about a
// millisecond).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <functional>
#include <memory>

#include "bulkhead/dispatch/delivery_job.h"
#include "bulkhead/transport/transport.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

class RequestBuilder {
 public:
  using BuildFn = std::function<Result<HttpRequest>(const DeliveryJob&)>;
  using Done = std::function<void(Result<HttpRequest>)>;

  // `threads` workers (at least 1) running `build`; results are posted to `io`, which must
  // outlive the builder.
  RequestBuilder(boost::asio::io_context& io, size_t threads, BuildFn build);
  ~RequestBuilder();
  RequestBuilder(const RequestBuilder&) = delete;
  RequestBuilder& operator=(const RequestBuilder&) = delete;

  // Builds `job`'s request on a worker and runs `done` with it on the loop. The worker reads its
  // own copy of `job` (a few KiB at most, against a millisecond of signing), so the caller's job
  // may change or go while the build runs.
  void Build(DeliveryJob job, Done done);

  // Builds handed to the workers whose result has not reached the loop yet.
  size_t pending() const { return *pending_; }

 private:
  boost::asio::io_context& io_;
  const BuildFn build_;
  std::shared_ptr<size_t> pending_ = std::make_shared<size_t>(0);  // loop thread only
  boost::asio::thread_pool pool_;  // last: its threads stop before the members above go
};

// The number of build threads for `configured` (0: one per core the process may run on).
size_t RequestBuilderThreads(int configured);

}  // namespace bulkhead
