// ASCII case-insensitive comparison, for protocol tokens (HTTP header names, methods) whose case
// does not matter. Locale-independent.
#pragma once

#include <string>
#include <string_view>

namespace bulkhead {

// True when `a` and `b` are equal ignoring ASCII letter case.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// `s` with ASCII letters in upper case; other bytes unchanged. Locale-independent.
inline std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

}  // namespace bulkhead
