#include "bulkhead/metrics/registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "bulkhead/metrics/metric_names.h"

namespace bulkhead {

const char* MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

namespace {

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

Status CheckLabelNames(const std::vector<std::string>& names, MetricType type) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (!IsValidLabelName(names[i])) {
      return Status::InvalidArgument("invalid label name \"" + names[i] + "\"");
    }
    if (type == MetricType::kHistogram && names[i] == "le") {
      return Status::InvalidArgument("label name \"le\" is reserved for histogram buckets");
    }
    for (size_t j = 0; j < i; ++j) {
      if (names[i] == names[j]) {
        return Status::InvalidArgument("label name \"" + names[i] + "\" given twice");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = IsAsciiAlpha(c) || c == '_' || c == ':' || (i > 0 && IsAsciiDigit(c));
    if (!ok) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = IsAsciiAlpha(c) || c == '_' || (i > 0 && IsAsciiDigit(c));
    if (!ok) return false;
  }
  return true;
}

// ---- Counter, Histogram -------------------------------------------------------------------------

void Counter::Increment(double by) {
  if (!(by > 0.0)) return;  // also rejects NaN
  value_.fetch_add(by, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(upper_bounds_.size() + 1)) {}

void Histogram::Observe(double v) {
  if (std::isnan(v)) return;
  // First bound >= v: buckets are "less than or equal" (le).
  size_t i =
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), v) - upper_bounds_.begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot s;
  s.upper_bounds = upper_bounds_;
  s.cumulative_counts.resize(upper_bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative_counts[i] = running;
  }
  s.count = running;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

// ---- Family<T> ----------------------------------------------------------------------------------

template <typename T>
Family<T>::Family(std::string name, std::string help, MetricType type,
                  std::vector<std::string> labels, Factory factory)
    : MetricFamily(std::move(name), std::move(help), type, std::move(labels)),
      factory_(std::move(factory)),
      discard_(factory_()) {
  if (label_names().empty()) children_.emplace(std::vector<std::string>{}, factory_());
}

template <typename T>
T& Family<T>::WithLabels(const std::vector<std::string>& label_values) {
  if (label_values.size() != label_names().size()) {
    assert(false && "WithLabels: wrong number of label values");
    return *discard_;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(label_values);
  if (it == children_.end()) it = children_.emplace(label_values, factory_()).first;
  return *it->second;
}

template <typename T>
T& Family<T>::WithLabels(std::initializer_list<std::string_view> label_values) {
  std::vector<std::string> values;
  values.reserve(label_values.size());
  for (std::string_view v : label_values) values.emplace_back(v);
  return WithLabels(values);
}

template <typename T>
Status Family<T>::CollectInto(FamilySnapshot& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, child] : children_) {  // std::map: already sorted by label values
    if constexpr (std::is_same_v<T, Histogram>) {
      out.histograms.push_back({values, child->Snapshot()});
    } else {
      out.samples.push_back({values, child->Value()});
    }
  }
  return Status::Ok();
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// ---- CallbackFamily -----------------------------------------------------------------------------

// A family whose samples a callback computes. Lifetime of the callback across threads:
//  1. Registry::Collect copies the shared_ptr under the registry lock, then calls CollectInto
//     without it; RemoveCallback may erase the map entry meanwhile.
//  2. CollectInto runs the callback while holding call_mu_ and only if removed_ is false.
//  3. RemoveCallback erases the entry, then takes call_mu_ (waiting out a running call) and sets
//     removed_. Any later CollectInto, e.g. from a Collect that copied the pointer before step 3,
//     sees removed_ and skips. So once RemoveCallback returns the callback never runs again.
class Registry::CallbackFamily final : public MetricFamily {
 public:
  CallbackFamily(std::string name, std::string help, MetricType type,
                 std::vector<std::string> labels, SampleCallback callback)
      : MetricFamily(std::move(name), std::move(help), type, std::move(labels)),
        callback_(std::move(callback)) {}

  Status CollectInto(FamilySnapshot& out) const override {
    Result<std::vector<MetricSample>> samples = Status::Internal("not run");
    {
      std::lock_guard<std::mutex> lock(call_mu_);
      if (removed_) return Status::NotFound("callback removed");
      samples = callback_();
    }
    if (!samples.ok()) return samples.status();
    for (const MetricSample& s : *samples) {
      if (s.label_values.size() != label_names().size()) {
        return Status::Internal("callback returned " + std::to_string(s.label_values.size()) +
                                " label values for " + std::to_string(label_names().size()) +
                                " label names");
      }
    }
    std::sort(samples->begin(), samples->end(), [](const MetricSample& a, const MetricSample& b) {
      return a.label_values < b.label_values;
    });
    for (size_t i = 1; i < samples->size(); ++i) {
      if ((*samples)[i].label_values == (*samples)[i - 1].label_values) {
        return Status::Internal("callback returned the same label values twice");
      }
    }
    out.samples = std::move(*samples);
    return Status::Ok();
  }

  void MarkRemoved() {
    std::lock_guard<std::mutex> lock(call_mu_);
    removed_ = true;
  }

 private:
  const SampleCallback callback_;
  mutable std::mutex call_mu_;
  bool removed_ = false;  // guarded by call_mu_
};

// ---- Registry -----------------------------------------------------------------------------------

Registry::Registry() : collect_log_(SystemClock::Instance(), std::chrono::minutes(1)) {
  auto errors = AddCounter(metric_names::kMetricsCollectErrorsTotal,
                           metric_names::kMetricsCollectErrorsTotalHelp,
                           {std::string(metric_names::kLabelMetric)});
  assert(errors.ok());
  collect_errors_ = *errors;
}

template <typename F>
Result<F*> Registry::AddOwned(std::string_view name, std::string_view help,
                              std::vector<std::string> label_names, MetricType type,
                              std::vector<double> bounds) {
  if (!IsValidMetricName(name)) {
    return Status::InvalidArgument("invalid metric name \"" + std::string(name) + "\"");
  }
  if (Status s = CheckLabelNames(label_names, type); !s.ok()) return s;

  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = families_.find(name); it != families_.end()) {
    auto* existing = dynamic_cast<F*>(it->second.get());
    bool same =
        existing != nullptr && existing->type() == type && existing->label_names() == label_names;
    if (same && type == MetricType::kHistogram) {
      auto b = histogram_bounds_.find(name);
      same = b != histogram_bounds_.end() && b->second == bounds;
    }
    if (!same) {
      return Status::AlreadyExists("metric \"" + std::string(name) +
                                   "\" is already registered with another definition");
    }
    return existing;
  }
  typename F::Factory factory;
  if constexpr (std::is_same_v<F, HistogramFamily>) {
    factory = [bounds]() { return std::make_unique<Histogram>(bounds); };
    histogram_bounds_.emplace(std::string(name), bounds);
  } else {
    using Child = std::remove_reference_t<decltype(std::declval<F&>().Get())>;
    factory = []() { return std::make_unique<Child>(); };
  }
  auto family = std::make_shared<F>(std::string(name), std::string(help), type,
                                    std::move(label_names), std::move(factory));
  F* raw = family.get();
  families_.emplace(std::string(name), std::move(family));
  return raw;
}

Result<CounterFamily*> Registry::AddCounter(std::string_view name, std::string_view help,
                                            std::vector<std::string> label_names) {
  return AddOwned<CounterFamily>(name, help, std::move(label_names), MetricType::kCounter, {});
}

Result<GaugeFamily*> Registry::AddGauge(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names) {
  return AddOwned<GaugeFamily>(name, help, std::move(label_names), MetricType::kGauge, {});
}

Result<HistogramFamily*> Registry::AddHistogram(std::string_view name, std::string_view help,
                                                std::vector<std::string> label_names,
                                                std::span<const double> upper_bounds) {
  std::vector<double> bounds(upper_bounds.begin(), upper_bounds.end());
  if (!bounds.empty() && std::isinf(bounds.back()) && bounds.back() > 0) bounds.pop_back();
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      return Status::InvalidArgument("histogram bucket bounds must be finite");
    }
    if (i > 0 && !(bounds[i] > bounds[i - 1])) {
      return Status::InvalidArgument("histogram bucket bounds must be strictly ascending");
    }
  }
  return AddOwned<HistogramFamily>(name, help, std::move(label_names), MetricType::kHistogram,
                                   std::move(bounds));
}

Status Registry::AddCallback(MetricType type, std::string_view name, std::string_view help,
                             std::vector<std::string> label_names, SampleCallback callback) {
  if (type == MetricType::kHistogram) {
    return Status::InvalidArgument("callback metrics are counters or gauges");
  }
  if (!callback) return Status::InvalidArgument("empty callback");
  if (!IsValidMetricName(name)) {
    return Status::InvalidArgument("invalid metric name \"" + std::string(name) + "\"");
  }
  if (Status s = CheckLabelNames(label_names, type); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  if (families_.contains(name)) {
    return Status::AlreadyExists("metric \"" + std::string(name) + "\" is already registered");
  }
  families_.emplace(std::string(name),
                    std::make_shared<CallbackFamily>(std::string(name), std::string(help), type,
                                                     std::move(label_names), std::move(callback)));
  return Status::Ok();
}

Status Registry::RemoveCallback(std::string_view name) {
  std::shared_ptr<CallbackFamily> family;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = families_.find(name);
    if (it == families_.end()) {
      return Status::NotFound("no metric \"" + std::string(name) + "\"");
    }
    family = std::dynamic_pointer_cast<CallbackFamily>(it->second);
    if (family == nullptr) {
      return Status::NotFound("metric \"" + std::string(name) + "\" is not a callback");
    }
    families_.erase(it);
  }
  family->MarkRemoved();  // waits for a running call (see CallbackFamily)
  return Status::Ok();
}

namespace {

// Appends label `name` = `value` to every series of `snap` (the samples' order is kept: every
// list gets the same last value).
void AppendLabel(FamilySnapshot& snap, const std::string& name, const std::string& value) {
  snap.label_names.push_back(name);
  for (MetricSample& s : snap.samples) s.label_values.push_back(value);
  for (HistogramSample& h : snap.histograms) h.label_values.push_back(value);
}

}  // namespace

Status Registry::SetExtraLabel(std::string name, std::string value, FamilyPredicate applies) {
  if (!IsValidLabelName(name)) return Status::InvalidArgument("invalid label name: " + name);
  auto label = std::make_shared<const ExtraLabel>(
      ExtraLabel{std::move(name), std::move(value), std::move(applies)});
  std::lock_guard<std::mutex> lock(mu_);
  extra_label_ = std::move(label);
  return Status::Ok();
}

std::vector<FamilySnapshot> Registry::Collect() const {
  std::vector<std::shared_ptr<MetricFamily>> families;
  std::shared_ptr<const ExtraLabel> extra;
  {
    std::lock_guard<std::mutex> lock(mu_);
    families.reserve(families_.size());
    for (const auto& [name, family] : families_) families.push_back(family);
    extra = extra_label_;
  }
  std::vector<FamilySnapshot> out = CollectFamilies(families);
  if (extra != nullptr) {
    for (FamilySnapshot& snap : out) {
      if (extra->applies(snap.name)) AppendLabel(snap, extra->name, extra->value);
    }
  }
  return out;
}

std::vector<FamilySnapshot> Registry::CollectFamilies(
    const std::vector<std::shared_ptr<MetricFamily>>& families) const {
  std::vector<FamilySnapshot> out;
  out.reserve(families.size());
  // The error counter is collected last so that failures of this collection already show in it.
  std::shared_ptr<MetricFamily> errors_family;
  for (const auto& family : families) {
    if (family.get() == collect_errors_) {
      errors_family = family;
      continue;
    }
    FamilySnapshot snap{
        family->name(), family->help(), family->type(), family->label_names(), {}, {}};
    Status s = family->CollectInto(snap);
    if (!s.ok()) {
      if (s.code() != StatusCode::kNotFound) {  // NotFound: removed concurrently, not a failure
        collect_errors_->WithLabels({family->name()}).Increment();
        std::optional<int64_t> dropped;
        {
          std::lock_guard<std::mutex> lock(log_mu_);
          dropped = collect_log_.Admit(family->name());
        }
        if (dropped) {
          spdlog::warn("metrics: collecting {} failed, left out of this scrape: {}{}",
                       family->name(), s.ToString(), LogLimiter::SuppressedNote(*dropped));
        }
      }
      continue;
    }
    if (snap.samples.empty() && snap.histograms.empty()) continue;
    out.push_back(std::move(snap));
  }
  if (errors_family != nullptr) {
    FamilySnapshot snap{errors_family->name(),
                        errors_family->help(),
                        errors_family->type(),
                        errors_family->label_names(),
                        {},
                        {}};
    (void)errors_family->CollectInto(snap);
    if (!snap.samples.empty()) {
      auto pos = std::lower_bound(
          out.begin(), out.end(), snap.name,
          [](const FamilySnapshot& f, const std::string& n) { return f.name < n; });
      out.insert(pos, std::move(snap));
    }
  }
  return out;
}

}  // namespace bulkhead
