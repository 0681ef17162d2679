// BoundedSax: an nlohmann SAX handler in front of another, which bounds how deep arrays and
// objects nest and turns a parse error into ParseJson's message (json.h). Returning false from an
// event stops the parse before a deeper level exists, so nothing recursive (dump, copy) ever sees
// an unbounded document. Errors are recorded, never thrown.
//
// `Inner` takes nlohmann's SAX events (null, boolean, number_*, string, binary, start_object,
// key, end_object, start_array, end_array); ParseJson puts nlohmann's DOM builder there, the
// PUSHB parser (job_array_parser.h) a collector of what each job needs, so that both accept
// exactly the same texts with the same errors.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "bulkhead/util/status.h"

namespace bulkhead {

template <typename Inner>
class BoundedSax {
 public:
  using json = nlohmann::json;

  BoundedSax(Inner& inner, int max_depth) : inner_(inner), max_depth_(max_depth) {}

  bool null() { return inner_.null(); }
  bool boolean(bool v) { return inner_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return inner_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return inner_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return inner_.number_float(v, s);
  }
  bool string(json::string_t& v) { return inner_.string(v); }
  bool binary(json::binary_t& v) { return inner_.binary(v); }
  bool start_object(std::size_t n) { return Enter() && inner_.start_object(n); }
  bool key(json::string_t& v) { return inner_.key(v); }
  bool end_object() {
    --depth_;
    return inner_.end_object();
  }
  bool start_array(std::size_t n) { return Enter() && inner_.start_array(n); }
  bool end_array() {
    --depth_;
    return inner_.end_array();
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

  Inner& inner_;
  const int max_depth_;
  int depth_ = 0;
  std::optional<std::string> error_;
};

// Runs nlohmann's SAX parser over `text` into `inner`, behind a BoundedSax of `max_depth`. Never
// throws. InvalidArgument with ParseJson's message when `text` is not JSON or nests too deep.
template <typename Inner>
Status ParseBounded(std::string_view text, Inner& inner, int max_depth) {
  BoundedSax<Inner> sax(inner, max_depth);
  bool ok;
  try {
    ok = nlohmann::json::sax_parse(text, &sax);
  } catch (const nlohmann::json::exception& e) {
    // Not expected (errors arrive through parse_error), but nothing from the network may throw
    // past this point.
    return Status::InvalidArgument(std::string("invalid JSON: ") + e.what());
  }
  if (!ok || sax.error()) return Status::InvalidArgument(sax.error().value_or("invalid JSON"));
  return Status::Ok();
}

}  // namespace bulkhead
