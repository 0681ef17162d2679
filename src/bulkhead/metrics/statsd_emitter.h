// StatsdEmitter: sends the registry's figures to a StatsD or DogStatsD agent over UDP on an
// interval, from its own thread. The same Registry::Collect() snapshot feeds /metrics, so StatsD
// shows the same figures, including scrape-time gauges such as queue latency (computed at each
// emission, never only "after a job finished").
//
// Usage (from the server, after parsing the [statsd] config section):
//   StatsdConfig cfg;
//   cfg.address = "127.0.0.1:8125"; cfg.flavor = StatsdFlavor::kDogStatsd;
//   cfg.tags = {{"env", "prod"}}; cfg.interval = std::chrono::seconds(10);
//   auto emitter = std::make_unique<StatsdEmitter>(registry, cfg);
//   if (Status s = emitter->Start(); !s.ok()) return s;   // fatal config error at startup
//   ...
//   emitter->Stop();                                       // or destroy it; before the registry
//
// Sending never blocks: the socket is non-blocking and connected; a datagram that cannot be sent
// at once (full buffer, ICMP port unreachable from an earlier send, no route) is dropped and
// counted in bulkhead_statsd_datagrams_dropped_total. Server threads never wait on the emitter.
//
// Thread safety: Start/Stop from one owning thread; EmitOnce and stats() from any thread
// (emissions are serialised by an internal mutex). The registry must outlive the emitter.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/statsd_format.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The [statsd] config section.
struct StatsdConfig {
  std::string address;                                    // "host:port", "[v6addr]:port"
  std::string prefix = "bulkhead";                        // name prefix, "" for none
  std::vector<std::pair<std::string, std::string>> tags;  // DogStatsD only (ParseStatsdTag)
  Duration interval = std::chrono::seconds(10);           // between emissions
  StatsdFlavor flavor = StatsdFlavor::kPlain;             // "statsd" | "dogstatsd"
  size_t max_datagram_bytes = 1432;                       // LAN MTU; 512 across the internet
};

// Checks a config without touching the network: InvalidArgument naming the bad key.
Status ValidateStatsdConfig(const StatsdConfig& config);

// Thread-safe as described in the file comment: Start/Stop from the owner, EmitOnce/stats from
// anywhere. Sends registry figures over UDP without ever blocking.
class StatsdEmitter {
 public:
  struct Stats {
    uint64_t emissions = 0;  // EmitOnce calls that ran
    uint64_t datagrams_sent = 0;
    uint64_t datagrams_dropped = 0;  // not sent at once (never retried)
  };

  // Registers bulkhead_statsd_datagrams_{sent,dropped}_total in `registry`.
  StatsdEmitter(Registry& registry, StatsdConfig config);
  ~StatsdEmitter();  // Stop()s
  StatsdEmitter(const StatsdEmitter&) = delete;
  StatsdEmitter& operator=(const StatsdEmitter&) = delete;

  // Validates the config, resolves the address (getaddrinfo: may wait on DNS, startup only) and
  // opens the non-blocking UDP socket. Idempotent. InvalidArgument / Unavailable on failure.
  Status Open();
  // Open()s, then starts the thread that calls EmitOnce every `interval` (first after one
  // interval). FailedPrecondition if already started.
  Status Start();
  // Stops and joins the thread (waits at most for one EmitOnce in progress). Idempotent.
  void Stop();

  // Collects the registry and sends it now, on the calling thread. FailedPrecondition if not
  // Open()ed. Drops are counted, not errors.
  Status EmitOnce();

  Stats stats() const;

 private:
  void Run();

  // Constant after construction.
  Registry& registry_;
  const StatsdConfig config_;
  Counter* sent_counter_ = nullptr;
  Counter* dropped_counter_ = nullptr;

  std::mutex emit_mu_;                          // serialises Open and EmitOnce
  int fd_ = -1;                                 // guarded by emit_mu_
  std::unique_ptr<StatsdFormatter> formatter_;  // guarded by emit_mu_

  std::atomic<uint64_t> emissions_{0};
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> dropped_{0};

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stopping_ = false;  // guarded by run_mu_
  std::thread thread_;     // owned by the Start/Stop thread
};

}  // namespace bulkhead
