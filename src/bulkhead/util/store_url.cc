#include "bulkhead/util/store_url.h"

namespace bulkhead {

std::optional<std::string> SqliteStorePath(std::string_view url) {
  if (!url.starts_with("sqlite:")) return std::nullopt;
  url.remove_prefix(7);
  if (url.starts_with("//")) url.remove_prefix(2);  // sqlite:///abs/path
  return std::string(url);
}

}  // namespace bulkhead
