// PushEndpoint: a push service on 127.0.0.1 for the replay, healthy or misbehaving in one of the
// ways Fault names. It keeps the arrival time of every request it reads, so the replay can tell
// how long a delivery took from PUSH to the remote host.
//
// Runs on its own thread with its own io_context; the destructor stops it and closes every
// connection (a blackholed or late request is then cut, as when a real host goes away).
// Requests are read with Beast; connections are kept alive as the client asks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bulkhead/replay/fault.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct PushEndpointOptions {
  Fault fault = Fault::kNone;
  std::chrono::milliseconds late_delay{40'000};    // kLate
  std::chrono::milliseconds drip_interval{5'000};  // kSlowDrip
  int retry_after_seconds = 30;                    // k429
};

// One request the endpoint read (for kRefuse: none ever).
struct PushArrival {
  int64_t at_us;       // steady clock (CLOCK_MONOTONIC), microseconds
  std::string target;  // the request target, e.g. "/push/17/123456789"
};

// Thread-safe.
class PushEndpoint {
 public:
  // Listens on 127.0.0.1 on a port the OS picks. For kRefuse the port is bound and released at
  // once, so connections to it are refused.
  static Result<std::unique_ptr<PushEndpoint>> Start(const PushEndpointOptions& options);
  ~PushEndpoint();
  PushEndpoint(const PushEndpoint&) = delete;
  PushEndpoint& operator=(const PushEndpoint&) = delete;

  uint16_t port() const;
  Fault fault() const;
  // Every request read so far, in arrival order.
  std::vector<PushArrival> Arrivals() const;
  // Connections accepted so far.
  int64_t connections() const;

  class Impl;

 private:
  explicit PushEndpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Microseconds on the steady clock (CLOCK_MONOTONIC, shared by every process on the machine).
int64_t SteadyMicros();

}  // namespace bulkhead
