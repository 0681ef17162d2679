// HeaderList: the HTTP header fields an encoder produces, in the order they should be sent.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulkhead/util/ascii.h"

namespace bulkhead {

// (name, value) pairs; names keep the case they are written in, lookups ignore case.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The value of the first header named `name` (ASCII case-insensitive), or nullopt.
inline std::optional<std::string> FindHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

}  // namespace bulkhead
