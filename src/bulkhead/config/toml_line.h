#pragma once

#include <toml++/toml.h>

#include <string>

namespace bulkhead {

// " (line N)" for a place in a config file, or "" when toml++ knows no position (a node built in
// code rather than parsed). Every config error names its line this way.
inline std::string TomlLine(const toml::source_region& where) {
  if (!where.begin) return "";
  return " (line " + std::to_string(where.begin.line) + ")";
}
// The same for a parsed node.
inline std::string TomlLine(const toml::node& node) { return TomlLine(node.source()); }

}  // namespace bulkhead
