#include "bulkhead/metrics/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace bulkhead {

namespace {

// Appends `{a="x",b="y"}`, with an optional trailing extra label (for le), or nothing when there
// are no labels at all.
void AppendLabels(std::string& out, const std::vector<std::string>& names,
                  const std::vector<std::string>& values, std::string_view extra_name = {},
                  std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return;
  out += '{';
  bool first = true;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (!first) out += ',';
    first = false;
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;  // produced by FormatPrometheusValue: never needs escaping
    out += '"';
  }
  out += '}';
}

void AppendSample(std::string& out, std::string_view name, std::string_view suffix,
                  const std::vector<std::string>& names, const std::vector<std::string>& values,
                  double value, std::string_view extra_name = {},
                  std::string_view extra_value = {}) {
  out += name;
  out += suffix;
  AppendLabels(out, names, values, extra_name, extra_value);
  out += ' ';
  out += FormatPrometheusValue(value);
  out += '\n';
}

}  // namespace

std::string FormatPrometheusValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Integers (up to 2^53, where doubles are still exact) print without fraction or exponent.
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    return std::to_string(static_cast<int64_t>(v));
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round-trip form
  return std::string(buf, end);
}

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderPrometheusText(const std::vector<FamilySnapshot>& families) {
  std::string out;
  for (const FamilySnapshot& f : families) {
    out += "# HELP ";
    out += f.name;
    out += ' ';
    out += EscapeHelp(f.help);
    out += "\n# TYPE ";
    out += f.name;
    out += ' ';
    out += MetricTypeName(f.type);
    out += '\n';
    for (const MetricSample& s : f.samples) {
      AppendSample(out, f.name, "", f.label_names, s.label_values, s.value);
    }
    for (const HistogramSample& h : f.histograms) {
      const HistogramSnapshot& d = h.data;
      for (size_t i = 0; i < d.upper_bounds.size(); ++i) {
        AppendSample(out, f.name, "_bucket", f.label_names, h.label_values,
                     static_cast<double>(d.cumulative_counts[i]), "le",
                     FormatPrometheusValue(d.upper_bounds[i]));
      }
      AppendSample(out, f.name, "_bucket", f.label_names, h.label_values,
                   static_cast<double>(d.count), "le", "+Inf");
      AppendSample(out, f.name, "_sum", f.label_names, h.label_values, d.sum);
      AppendSample(out, f.name, "_count", f.label_names, h.label_values,
                   static_cast<double>(d.count));
    }
  }
  return out;
}

std::string RenderPrometheusText(const Registry& registry) {
  return RenderPrometheusText(registry.Collect());
}

}  // namespace bulkhead
