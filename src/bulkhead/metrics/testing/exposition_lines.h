// Test-only: reading Prometheus exposition text (metrics/registry.h renders it).
#pragma once

#include <string>

namespace bulkhead {

// Whether `text` holds `line` as a whole line (not the first line, which is always a HELP line).
inline bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace bulkhead
