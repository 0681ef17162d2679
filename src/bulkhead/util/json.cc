#include "bulkhead/util/json.h"

#include <cstring>
#include <optional>

namespace bulkhead {
namespace {

using nlohmann::json;

// nlohmann's DOM builder with a depth bound: returning false from a SAX event stops the parse
// before a deeper level exists, so nothing recursive (dump, copy) ever sees an unbounded document.
// Errors are recorded, never thrown.
class BoundedSax {
 public:
  BoundedSax(json& root, int max_depth)
      : dom_(root, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool key(json::string_t& v) { return dom_.key(v); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    if (auto at = what.find("parse error"); at != std::string::npos) {
      error_ = "invalid JSON: " + what.substr(at);
    } else {
      // out_of_range (a number that overflows a double): "[json.exception.out_of_range.406] ...".
      auto text = what.find("] ");
      error_ = "invalid JSON: " + (text == std::string::npos ? what : what.substr(text + 2)) +
               " at byte " + std::to_string(position);
    }
    return false;
  }

  const std::optional<std::string>& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    error_ = "invalid JSON: nested deeper than " + std::to_string(max_depth_) +
             " levels (max_json_depth)";
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const int max_depth_;
  int depth_ = 0;
  std::optional<std::string> error_;
};

}  // namespace

Result<json> ParseJson(std::string_view text, int max_depth) {
  json root;
  BoundedSax sax(root, max_depth);
  bool ok;
  try {
    ok = json::sax_parse(text, &sax);
  } catch (const json::exception& e) {
    // Not expected (errors arrive through parse_error), but nothing from the network may throw
    // past this point.
    return Status::InvalidArgument(std::string("invalid JSON: ") + e.what());
  }
  if (!ok || sax.error()) {
    return Status::InvalidArgument(sax.error().value_or("invalid JSON"));
  }
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
