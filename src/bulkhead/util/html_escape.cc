#include "bulkhead/util/html_escape.h"

#include "bulkhead/util/json.h"

namespace bulkhead {
namespace {

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not one.
size_t Utf8Length(std::string_view s) {
  for (size_t n = 1; n <= 4 && n <= s.size(); ++n) {
    if (IsValidUtf8(s.substr(0, n))) return n;
  }
  return 0;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  while (!text.empty()) {
    unsigned char c = text.front();
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (c < 0x80) {
          out += static_cast<char>(c);
        } else if (size_t n = Utf8Length(text); n > 0) {
          out.append(text.substr(0, n));
          text.remove_prefix(n - 1);
        } else {
          out += "\xEF\xBF\xBD";  // U+FFFD
        }
    }
    text.remove_prefix(1);
  }
  return out;
}

}  // namespace bulkhead
