#include "bulkhead/metrics/statsd_format.h"

#include <cmath>

#include "bulkhead/metrics/prometheus_text.h"

namespace bulkhead {

namespace {

constexpr std::string_view kNamespace = "bulkhead_";

bool IsPlainSegmentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// A plain StatsD name segment: dots would split the Graphite path, colons end the name.
std::string PlainSegment(std::string_view s) {
  if (s == "+Inf") return "inf";
  std::string out(s);
  for (char& c : out) {
    if (!IsPlainSegmentChar(c)) c = '_';
  }
  return out.empty() ? "_" : out;
}

bool IsTagBreaker(char c) {
  return c == ',' || c == '|' || c == '#' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string TagText(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (IsTagBreaker(c)) c = '_';
  }
  return out;
}

// Metric names may contain ':' (recording-rule style), the StatsD name/value separator.
std::string NameText(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (!IsPlainSegmentChar(c) && c != '.') c = '_';
  }
  return out;
}

// "k:v,k2,k3:v3" from configured tags (a tag with an empty value is sent bare).
std::string JoinTags(const std::vector<std::pair<std::string, std::string>>& tags) {
  std::string t;
  for (const auto& [k, v] : tags) {
    if (!t.empty()) t += ',';
    t += TagText(k);
    if (!v.empty()) t += ':' + TagText(v);
  }
  return t;
}

}  // namespace

Result<StatsdFlavor> ParseStatsdFlavor(std::string_view s) {
  if (s == "statsd") return StatsdFlavor::kPlain;
  if (s == "dogstatsd") return StatsdFlavor::kDogStatsd;
  return Status::InvalidArgument("statsd flavor must be \"statsd\" or \"dogstatsd\", not \"" +
                                 std::string(s) + "\"");
}

Result<std::pair<std::string, std::string>> ParseStatsdTag(std::string_view s) {
  if (s.empty()) return Status::InvalidArgument("empty statsd tag");
  for (char c : s) {
    if (IsTagBreaker(c)) {
      return Status::InvalidArgument("statsd tag \"" + std::string(s) +
                                     "\" contains ',', '|', '#' or whitespace");
    }
  }
  size_t colon = s.find(':');
  if (colon == 0) {
    return Status::InvalidArgument("statsd tag \"" + std::string(s) + "\" has no key");
  }
  if (colon == std::string_view::npos) return std::make_pair(std::string(s), std::string());
  return std::make_pair(std::string(s.substr(0, colon)), std::string(s.substr(colon + 1)));
}

StatsdFormatter::StatsdFormatter(StatsdFlavor flavor, std::string prefix,
                                 std::vector<std::pair<std::string, std::string>> tags)
    : flavor_(flavor), prefix_(NameText(prefix)), global_tags_(JoinTags(tags)) {}

std::string StatsdFormatter::MetricName(std::string_view family, std::string_view suffix,
                                        const std::vector<std::string>& label_names,
                                        const std::vector<std::string>& label_values) const {
  std::string name;
  if (!prefix_.empty()) {
    if (family.starts_with(kNamespace)) family.remove_prefix(kNamespace.size());
    name = prefix_ + '.';
  }
  name += NameText(family);
  name += suffix;
  if (flavor_ == StatsdFlavor::kPlain) {
    for (size_t i = 0; i < label_names.size() && i < label_values.size(); ++i) {
      name += '.';
      name += PlainSegment(label_names[i]);
      name += '.';
      name += PlainSegment(label_values[i]);
    }
  }
  return name;
}

std::string StatsdFormatter::Tags(const std::vector<std::string>& label_names,
                                  const std::vector<std::string>& label_values) const {
  std::string t = global_tags_;
  for (size_t i = 0; i < label_names.size() && i < label_values.size(); ++i) {
    if (!t.empty()) t += ',';
    t += TagText(label_names[i]);
    t += ':';
    t += TagText(label_values[i]);
  }
  return t;
}

void StatsdFormatter::Emit(std::vector<std::string>& out, std::string_view family,
                           std::string_view suffix, const std::vector<std::string>& label_names,
                           const std::vector<std::string>& label_values, double value, char type) {
  if (!std::isfinite(value)) return;
  std::string name = MetricName(family, suffix, label_names, label_values);
  std::string tail = std::string("|") + type;
  if (flavor_ == StatsdFlavor::kDogStatsd) {
    std::string tags = Tags(label_names, label_values);
    if (!tags.empty()) tail += "|#" + tags;
  }
  std::string line;
  if (flavor_ == StatsdFlavor::kPlain && type == 'g' && value < 0) {
    line = name + ":0" + tail + '\n';  // plain StatsD reads "-3" as a delta: reset to 0 first
  }
  line += name + ':' + FormatPrometheusValue(value) + tail;
  out.push_back(std::move(line));
}

double StatsdFormatter::CounterDelta(const std::string& key, double value) {
  auto [it, inserted] = previous_.try_emplace(key, 0.0);
  double delta = value - it->second;
  if (delta < 0) delta = value;  // the counter restarted (e.g. a callback's source reset)
  it->second = value;
  return delta;
}

std::vector<std::string> StatsdFormatter::Format(const std::vector<FamilySnapshot>& families) {
  std::vector<std::string> out;
  for (const FamilySnapshot& f : families) {
    for (const MetricSample& s : f.samples) {
      if (f.type == MetricType::kCounter) {
        std::string key = f.name;
        for (const std::string& v : s.label_values) key += '\x1f' + v;
        Emit(out, f.name, "", f.label_names, s.label_values, CounterDelta(key, s.value), 'c');
      } else {
        Emit(out, f.name, "", f.label_names, s.label_values, s.value, 'g');
      }
    }
    for (const HistogramSample& h : f.histograms) {
      std::string key = f.name;
      for (const std::string& v : h.label_values) key += '\x1f' + v;
      const HistogramSnapshot& d = h.data;
      Emit(out, f.name, ".count", f.label_names, h.label_values,
           CounterDelta(key + "\x1f"
                              "count",
                        static_cast<double>(d.count)),
           'c');
      Emit(out, f.name, ".sum", f.label_names, h.label_values,
           CounterDelta(key + "\x1f"
                              "sum",
                        d.sum),
           'c');
      std::vector<std::string> names = f.label_names;
      names.push_back("le");
      std::vector<std::string> values = h.label_values;
      values.emplace_back();
      for (size_t i = 0; i <= d.upper_bounds.size(); ++i) {
        values.back() =
            i < d.upper_bounds.size() ? FormatPrometheusValue(d.upper_bounds[i]) : "+Inf";
        double cumulative =
            static_cast<double>(i < d.upper_bounds.size() ? d.cumulative_counts[i] : d.count);
        Emit(out, f.name, ".bucket", names, values,
             CounterDelta(key +
                              "\x1f"
                              "le" +
                              values.back(),
                          cumulative),
             'c');
      }
    }
  }
  return out;
}

std::vector<std::string> PackDatagrams(const std::vector<std::string>& lines, size_t max_bytes) {
  std::vector<std::string> out;
  std::string current;
  for (const std::string& line : lines) {
    if (!current.empty() && current.size() + 1 + line.size() > max_bytes) {
      out.push_back(std::move(current));
      current.clear();
    }
    if (!current.empty()) current += '\n';
    current += line;
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

}  // namespace bulkhead
