// HeaderList: the HTTP header fields an encoder produces, in the order they should be sent.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulkhead/util/ascii.h"

namespace bulkhead {

// (name, value) pairs; names keep the case they are written in, lookups ignore case.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// RFC 9110 §5.1: a field name is a token (letters, digits and !#$%&'*+-.^_`|~), not empty.
inline bool IsHeaderFieldName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// A field value bulkhead sends as given: no control bytes (RFC 9110 §5.5) but horizontal tab.
inline bool IsHeaderFieldValue(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

// The value of the first header named `name` (ASCII case-insensitive), or nullopt.
inline std::optional<std::string> FindHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

}  // namespace bulkhead
