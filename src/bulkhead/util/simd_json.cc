#include "bulkhead/util/simd_json.h"

#include <algorithm>

namespace bulkhead {

bool SimdJsonParse(std::string_view text, int max_depth, simdjson::dom::element& root) {
  if (text.size() > kSimdJsonMaxBytes || max_depth < 1) return false;
  thread_local simdjson::dom::parser parser;
  // simdjson counts the document as a level and an empty container as none: at its depth
  // `max_depth` it accepts `max_depth` levels only when the innermost is empty (fewer otherwise),
  // never more. The texts it refuses nearer the bound are nlohmann's to judge.
  size_t depth = static_cast<size_t>(max_depth);
  if (parser.max_depth() != depth || parser.capacity() < text.size()) {
    size_t capacity = std::max(parser.capacity(), text.size());
    if (parser.allocate(capacity, depth) != simdjson::SUCCESS) return false;
  }
  // The parser copies the text into its own buffer, padded as its SIMD reads need.
  simdjson::dom::element parsed;
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(parsed) !=
      simdjson::SUCCESS) {
    return false;
  }
  root = parsed;
  return true;
}

}  // namespace bulkhead
