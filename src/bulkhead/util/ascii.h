// ASCII helpers for protocol text (HTTP header names and values, methods, schemes, hosts): case
// folding, case-insensitive comparison and trimming. Locale-independent; bytes outside ASCII
// letters are left as they are.
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

// `s` with ASCII letters in lower case; other bytes unchanged. Locale-independent.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// HTTP's optional whitespace (RFC 9110 §5.6.3): space and horizontal tab.
inline constexpr std::string_view kHttpWhitespace = " \t";

// `s` without its leading and trailing bytes that are in `chars`.
inline std::string_view TrimAscii(std::string_view s, std::string_view chars = kHttpWhitespace) {
  size_t begin = s.find_first_not_of(chars);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(chars) - begin + 1);
}

}  // namespace bulkhead
