#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bulkhead {

// The file of a `sqlite:PATH` (or `sqlite:///abs/path`) store URL; nullopt for any other URL. The
// path may be empty (callers refuse it, naming the URL).
std::optional<std::string> SqliteStorePath(std::string_view url);

}  // namespace bulkhead
