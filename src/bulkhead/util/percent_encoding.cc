#include "bulkhead/util/percent_encoding.h"

#include "bulkhead/util/hex.h"

namespace bulkhead {

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int hi = i + 2 < text.size() ? HexDigitValue(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? HexDigitValue(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return Status::InvalidArgument("bad percent-escape at byte " + std::to_string(i));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace bulkhead
