#include "bulkhead/util/json.h"

#include <cstring>

#include "bulkhead/util/bounded_sax.h"

namespace bulkhead {

using nlohmann::json;

Result<json> ParseJson(std::string_view text, int max_depth) {
  json root;
  nlohmann::detail::json_sax_dom_parser<json> dom(root, /*allow_exceptions=*/false);
  if (Status s = ParseBounded(text, dom, max_depth); !s.ok()) return s;
  return root;
}

std::string DumpJson(const json& doc) {
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool TextContains(std::string_view text, std::string_view needle) {
  if (needle.empty()) return true;
  return memmem(text.data(), text.size(), needle.data(), needle.size()) != nullptr;
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int extra;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;  // a continuation byte, an overlong lead (C0, C1) or past U+10FFFF (F5..FF)
    }
    if (i + extra >= text.size()) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

}  // namespace bulkhead
