// Registry: bulkhead's in-process metrics (counters, gauges, histograms with label sets, and
// scrape-time callback metrics). Renderers (prometheus_text.h, statsd_emitter.h) read it through
// Registry::Collect(), which returns a plain snapshot; both outputs show the same figures.
//
// Usage:
//   Registry registry;
//   auto fetched = registry.AddCounter("bulkhead_jobs_processed_total", "Jobs acked.");
//   if (!fetched.ok()) return fetched.status();
//   Counter& processed = (*fetched)->Get();       // cache the reference; updates are lock-free
//   processed.Increment();
//
//   // Queue latency is computed when scraped, never pushed by workers: one sample per queue.
//   Status s = registry.AddCallbackGauge("bulkhead_queue_latency_seconds", "...", {"queue"},
//       [&]() -> Result<std::vector<MetricSample>> {
//         double age = snapshot.queues.at("default").latency_seconds;  // an EngineSnapshot
//         return std::vector<MetricSample>{{{"default"}, age}};
//       });
//   (view/metrics_gauges.cc registers it so, from the EngineSnapshot the event loop last
//   published; RemoveCallback undoes it.)
//
// Thread safety, in short: registering, updating and collecting may happen concurrently from any
// threads. Counter/Gauge/Histogram updates are lock-free atomics; creating a labelled child takes
// the family's mutex; registration takes the registry's mutex; callbacks run on the collecting
// thread with no registry lock held.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/util/log_limiter.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge" or "histogram", as on a Prometheus TYPE line.
const char* MetricTypeName(MetricType type);

// A monotonically increasing value. Thread-safe and lock-free.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds `by`. Negative or NaN increments are ignored (a counter never goes down).
  void Increment(double by = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down. Thread-safe and lock-free.
class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double d) { value_.fetch_add(d, std::memory_order_relaxed); }
  void Sub(double d) { value_.fetch_sub(d, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Observed values of one histogram child, bucket counts already cumulative.
struct HistogramSnapshot {
  std::vector<double> upper_bounds;         // ascending, finite; "+Inf" is implicit
  std::vector<uint64_t> cumulative_counts;  // size upper_bounds + 1; the last is the +Inf bucket
  uint64_t count = 0;                       // == cumulative_counts.back()
  double sum = 0.0;
};

// Counts observations into fixed buckets. Thread-safe and lock-free: each bucket is its own
// atomic, and the snapshot derives the total count from the buckets, so a snapshot's +Inf bucket
// always equals its count even while other threads observe (the sum may lag by in-flight
// observations).
class Histogram {
 public:
  // `upper_bounds` must be strictly ascending and finite (Registry::AddHistogram checks).
  explicit Histogram(std::vector<double> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Counts `v` into the first bucket with v <= upper bound. NaN is ignored.
  void Observe(double v);
  HistogramSnapshot Snapshot() const;

 private:
  const std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // per bucket, not cumulative; +Inf last
  std::atomic<double> sum_{0.0};
};

// One series of a counter or gauge: label values in the family's label-name order.
struct MetricSample {
  std::vector<std::string> label_values;
  double value = 0.0;
};

struct HistogramSample {
  std::vector<std::string> label_values;
  HistogramSnapshot data;
};

// Everything a renderer needs about one family at one instant. Samples are sorted by label values.
struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<std::string> label_names;
  std::vector<MetricSample> samples;        // counters and gauges
  std::vector<HistogramSample> histograms;  // histograms
};

// Implementations are thread-safe. Interface of a registered family, for Registry's bookkeeping.
class MetricFamily {
 public:
  virtual ~MetricFamily() = default;
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Fills `out` (name, help, type, labels already set by the caller). An error means the family
  // is left out of this collection.
  virtual Status CollectInto(FamilySnapshot& out) const = 0;

 protected:
  MetricFamily(std::string name, std::string help, MetricType type,
               std::vector<std::string> label_names)
      : name_(std::move(name)),
        help_(std::move(help)),
        type_(type),
        label_names_(std::move(label_names)) {}

 private:
  // Constant after construction.
  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
};

// Thread-safe. The children of one metric name, one per distinct label-value list: children are
// created under mu_ and never destroyed before the family, so a returned reference stays valid for
// the registry's lifetime and can be cached by hot paths.
template <typename T>
class Family final : public MetricFamily {
 public:
  using Factory = std::function<std::unique_ptr<T>()>;

  Family(std::string name, std::string help, MetricType type, std::vector<std::string> labels,
         Factory factory);

  // The child for these label values (one per label name, in order), created at zero on first use.
  // A wrong number of values is a bug: it asserts in debug builds and, in release builds, returns
  // a child that is never exported, so the caller's update is dropped rather than mislabelled.
  T& WithLabels(const std::vector<std::string>& label_values);
  T& WithLabels(std::initializer_list<std::string_view> label_values);
  // The single child of a family without labels (created at registration, so it shows as 0).
  T& Get() { return WithLabels(std::vector<std::string>{}); }

  Status CollectInto(FamilySnapshot& out) const override;

 private:
  const Factory factory_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_;  // guarded by mu_
  std::unique_ptr<T> discard_;  // constant after construction: target of wrong-arity calls
};

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// Computes a family's series at collection time. Must be quick and must not wait on workers (it
// runs on the scraping thread, and the point of a scrape-time figure is to stay true when every
// worker is stuck). An error leaves the family out of that scrape and counts
// bulkhead_metrics_collect_errors_total{metric="<name>"}: a failed figure is missing, never frozen.
// Each sample needs one label value per label name, and label-value lists must be distinct.
using SampleCallback = std::function<Result<std::vector<MetricSample>>()>;

// Thread-safe: registration, updates and Collect() may run concurrently from any threads (see the
// file comment). Owns all metric families; they live as long as the registry, so the pointers
// Add* return stay valid until it is destroyed.
class Registry {
 public:
  Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a family. Registering the same name again with the same type, label names (and
  // buckets) returns the existing family, so independent modules may both declare a metric.
  // Errors: InvalidArgument for a bad metric/label name or bucket list; AlreadyExists when the
  // name is taken by a different definition or a callback.
  Result<CounterFamily*> AddCounter(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names = {});
  Result<GaugeFamily*> AddGauge(std::string_view name, std::string_view help,
                                std::vector<std::string> label_names = {});
  // `upper_bounds`: strictly ascending, finite; a trailing +Inf is accepted and dropped.
  Result<HistogramFamily*> AddHistogram(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names,
                                        std::span<const double> upper_bounds);

  // Registers a family whose samples `callback` computes at every collection. `type` is kGauge or
  // kCounter (for a counter kept elsewhere, e.g. by the store). Errors as for AddCounter;
  // AlreadyExists for any existing family of that name.
  Status AddCallback(MetricType type, std::string_view name, std::string_view help,
                     std::vector<std::string> label_names, SampleCallback callback);
  Status AddCallbackGauge(std::string_view name, std::string_view help,
                          std::vector<std::string> label_names, SampleCallback callback) {
    return AddCallback(MetricType::kGauge, name, help, std::move(label_names), std::move(callback));
  }

  // Unregisters a callback family. When it returns, the callback is not running and will never
  // run again, so objects it captured may be destroyed. Must not be called from inside a callback.
  // NotFound if no callback of that name is registered.
  Status RemoveCallback(std::string_view name);

  // From the next Collect on, every series of each family `applies` accepts carries one more
  // label, `name` = `value`, after its own (a node's own figures on a store several nodes share:
  // node="<node id>"). Setting it again replaces it. `applies` must be quick and thread-safe (it
  // runs at every collection). InvalidArgument for a bad label name.
  using FamilyPredicate = std::function<bool(std::string_view family)>;
  Status SetExtraLabel(std::string name, std::string value, FamilyPredicate applies);

  // Snapshot of every family, sorted by name; families without any series are left out. Runs the
  // callbacks on the calling thread.
  std::vector<FamilySnapshot> Collect() const;

 private:
  class CallbackFamily;
  struct ExtraLabel {
    std::string name, value;
    FamilyPredicate applies;
  };

  // Collect's work on the families it copied: the snapshots, sorted by name.
  std::vector<FamilySnapshot> CollectFamilies(
      const std::vector<std::shared_ptr<MetricFamily>>& families) const;

  template <typename F>
  Result<F*> AddOwned(std::string_view name, std::string_view help,
                      std::vector<std::string> label_names, MetricType type,
                      std::vector<double> bounds);

  mutable std::mutex mu_;
  // Guarded by mu_. shared_ptr so a collection in progress keeps a family alive past removal.
  std::map<std::string, std::shared_ptr<MetricFamily>, std::less<>> families_;
  std::map<std::string, std::vector<double>, std::less<>> histogram_bounds_;  // guarded by mu_
  std::shared_ptr<const ExtraLabel> extra_label_;  // guarded by mu_; null: none
  CounterFamily* collect_errors_ = nullptr;        // constant after construction
  // One warning per family per minute while its collection keeps failing (every scrape of a
  // server whose store is down would otherwise log each store-backed family); the counter above
  // still counts every failure.
  mutable std::mutex log_mu_;
  mutable LogLimiter collect_log_;  // guarded by log_mu_
};

// Name checks (exposed for tests and for callers that build names).
bool IsValidMetricName(std::string_view name);  // [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidLabelName(std::string_view name);   // [a-zA-Z_][a-zA-Z0-9_]*, not "__"-prefixed

}  // namespace bulkhead
