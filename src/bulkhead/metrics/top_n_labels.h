// TopNLabels: bounded cardinality for per-remote-host label values. A Mastodon server federates
// with tens of thousands of hosts; one series per host and outcome would swamp Prometheus. The N
// most active hosts keep their own `host` label value; all others share the value "other".
//
// Usage in the delivery engine (Dispatcher::host_labels(); dispatch/attempt_runner.cc and
// view/delivery_gauges.cc):
//   TopNLabels hosts(SystemClock::Instance(), {.top_n = 20});
//   // on every delivery attempt, including ones refused by the breaker or the host cap, so that
//   // a broken host keeps its own label while it is being refused:
//   deliveries->WithLabels({hosts.RecordAndLabel(host), std::string(outcome)}).Increment();
//   // scrape-time per-host gauges, folded the same way (values of folded hosts are summed):
//   registry.AddCallbackGauge(mn::kHostInflight, mn::kHostInflightHelp, {"host"},
//       [&]() -> Result<std::vector<MetricSample>> {
//         return hosts.Fold(HostGaugeValues(snapshot, HostGauge::kInFlight));
//       });
//
// Membership rules (deterministic given the Clock):
//  1. Activity is a score per host: Record adds `weight`; at each refresh every score decays by
//     0.5^(elapsed / half_life), so "most active" means "most active recently".
//  2. While fewer than top_n hosts hold a label, a recorded host gets one at once (a small
//     deployment never sees "other").
//  3. Otherwise membership changes only at refresh (every refresh_interval, checked on each call):
//     the top_n hosts by score win, a current member's score counting `stickiness` times, so two
//     hosts of similar activity do not swap labels back and forth.
//  4. At most max_tracked hosts are tracked; a new host past that evicts the least active
//     non-member. Memory is O(max_tracked).
// When a host moves between its own label and "other", its counter continues in the other series;
// sums and rate() over all hosts stay correct. A host literally named "other" is always folded.
//
// Thread-safe: all methods take an internal mutex (short critical sections, no I/O).
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulkhead/metrics/registry.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

struct TopNLabelsOptions {
  size_t top_n = 20;                                     // hosts with their own label
  size_t max_tracked = 2000;                             // hosts whose activity is tracked
  Duration refresh_interval = std::chrono::seconds(60);  // membership changes at most this often
  Duration half_life = std::chrono::minutes(10);         // of the activity score
  double stickiness = 1.25;                              // >= 1; a member's score counts this much
};

// Thread-safe (internal mutex). Maps hosts to bounded label values; rules in the file comment.
class TopNLabels {
 public:
  static constexpr std::string_view kOther = "other";

  // `clock` must outlive this object. Options are clamped to sane values (top_n <= max_tracked,
  // stickiness >= 1, positive durations).
  TopNLabels(const Clock& clock, TopNLabelsOptions options);
  TopNLabels(const TopNLabels&) = delete;
  TopNLabels& operator=(const TopNLabels&) = delete;

  // Counts activity for `host` (weight > 0; others are ignored).
  void Record(std::string_view host, double weight = 1.0);
  // The label value for `host`: the host itself if it currently holds a label, else "other".
  std::string Label(std::string_view host);
  // Record(host, weight), then Label(host).
  std::string RecordAndLabel(std::string_view host, double weight = 1.0);

  // Folds per-host values into label values: members keep their own entry, all other hosts are
  // summed into one "other" entry (present only if some host was folded). Output is sorted by
  // label value, one label value per sample: ready for a scrape-time callback. Duplicate hosts in
  // the input are summed.
  std::vector<MetricSample> Fold(const std::vector<std::pair<std::string, double>>& per_host);

  // The hosts holding their own label, sorted. For tests and diagnostics.
  std::vector<std::string> Members();
  size_t tracked() const;

 private:
  void MaybeRefreshLocked(TimePoint now);
  void EvictOneLocked();
  void RecordLocked(std::string_view host, double weight);
  std::string LabelLocked(std::string_view host) const;

  // Constant after construction.
  const Clock& clock_;
  const TopNLabelsOptions options_;

  mutable std::mutex mu_;
  // Guarded by mu_.
  std::map<std::string, double, std::less<>> scores_;
  std::set<std::string, std::less<>> members_;
  TimePoint last_refresh_;
};

}  // namespace bulkhead
