// RelayFigures: what the relay counts per app, for INFO, the dashboard's Relay page and /metrics
// (docs/relay.md, "What each figure means"). RelayCounters keeps them on the event loop and
// mirrors each count into the metrics registry (thread-safe counters) when one is given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/metrics/registry.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

struct RelayAppFigures {
  std::string app;
  std::string service;                      // "apns" or "fcm"
  std::string target;                       // the APNs topic or the FCM project
  uint64_t accepted = 0;                    // stored, answered 201
  uint64_t forwarded = 0;                   // APNs/FCM took it (200)
  uint64_t retried = 0;                     // attempts that failed and will be tried again
  uint64_t dead = 0;                        // refused for good (BadDeviceToken, …)
  uint64_t gone = 0;                        // the token is gone (410 Unregistered / UNREGISTERED)
  uint64_t unsubscribes = 0;                // DELETEs of an Unsubscribe-URL started
  std::map<int, uint64_t> refused;          // answered to the sender: 400, 413, 415, 429, 503
  std::map<std::string, uint64_t> reasons;  // APNs reason / FCM errorCode of failed answers
  uint64_t latency_count = 0;               // forward attempts answered
  double latency_sum_seconds = 0;
  // The mean time a forward attempt waited for its answer, in ms; nullopt before the first.
  std::optional<double> mean_latency_ms() const {
    if (latency_count == 0) return std::nullopt;
    return 1000 * latency_sum_seconds / static_cast<double>(latency_count);
  }
  // While the app is stopped (credentials refused): why, and when it tries again.
  std::string stopped_reason;
  std::optional<TimePoint> stopped_until;
};

struct RelaySnapshot {
  std::string listen;  // the relay's address; empty: off
  std::vector<RelayAppFigures> apps;
};

// What becomes of one forward attempt, for the counters.
enum class RelayEvent { kForwarded, kRetried, kDead, kGone };

class RelayCounters {
 public:
  // Registers the bulkhead_relay_* families in `registry` (which must outlive the counters).
  Status RegisterMetrics(Registry& registry);

  // Figures of `app`, created on first use with its service and target.
  RelayAppFigures& App(const std::string& app, const std::string& service,
                       const std::string& target);

  void Accepted(RelayAppFigures& f);
  void Refused(RelayAppFigures& f, int status);
  // `reason`: the service's reason word (empty for none); `latency_seconds` < 0: no answer timed.
  void Attempt(RelayAppFigures& f, RelayEvent event, const std::string& reason,
               double latency_seconds);
  void Unsubscribe(RelayAppFigures& f);
  // Stopped with `reason` until `until`, or resumed (reason empty).
  void Stopped(RelayAppFigures& f, const std::string& reason, std::optional<TimePoint> until);

  std::vector<RelayAppFigures> Snapshot() const;

 private:
  std::map<std::string, RelayAppFigures> apps_;
  CounterFamily* messages_ = nullptr;
  CounterFamily* refused_ = nullptr;
  CounterFamily* reasons_ = nullptr;
  HistogramFamily* latency_ = nullptr;
  GaugeFamily* stopped_ = nullptr;
};

}  // namespace bulkhead
