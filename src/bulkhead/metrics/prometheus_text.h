// Rendering of metric snapshots in the Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/).
//
// The HTTP module serves GET /metrics as:
//   std::string body = RenderPrometheusText(registry);
//   reply(200, {{"Content-Type", std::string(kPrometheusTextContentType)}}, body);
// and must answer from a thread that no worker or job can block, so a stuck server still reports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/metrics/registry.h"

namespace bulkhead {

// Always send it: Prometheus picks its parser from the response Content-Type (3.x fails without).
inline constexpr std::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Renders families in the given order: for each, "# HELP", "# TYPE", then its samples (histograms
// as _bucket{le=...} ascending with le="+Inf", then _sum and _count). Ends with a newline.
// Pure function; thread-compatible.
std::string RenderPrometheusText(const std::vector<FamilySnapshot>& families);

// Collects `registry` (running its callbacks on this thread) and renders it.
std::string RenderPrometheusText(const Registry& registry);

// A sample value as Prometheus text: "NaN", "+Inf", "-Inf", integers without a fraction ("42"),
// other values in the shortest form that parses back to the same double ("0.25", "1e-09").
std::string FormatPrometheusValue(double v);

// Escaping rules of format 0.0.4: label values escape backslash, double quote and newline; HELP
// text escapes backslash and newline only.
std::string EscapeLabelValue(std::string_view v);
std::string EscapeHelp(std::string_view v);

}  // namespace bulkhead
