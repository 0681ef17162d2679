// JSON text read without parsing it again: where a document that ParseJson has already accepted
// puts its top-level parts. Used to keep a job's JSON as the client sent it instead of writing the
// parsed document out again (job_parser.h). Every function here assumes text ParseJson accepted;
// on other text the answer is unspecified (but no read goes outside `text`).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "bulkhead/util/ascii.h"

namespace bulkhead {

// JSON's insignificant whitespace (RFC 8259 §2): space, tab, line feed, carriage return.
inline constexpr std::string_view kJsonWhitespace = " \t\n\r";

// `text` without the JSON whitespace before and after it.
inline std::string_view TrimJsonWhitespace(std::string_view text) {
  return TrimAscii(text, kJsonWhitespace);
}

// The elements of a JSON array, as views into `array_text` trimmed of whitespace, in order.
std::vector<std::string_view> JsonArrayElements(std::string_view array_text);

// How many members a JSON object's text holds. A key given twice counts twice, where the parsed
// document (the last one wins) holds it once: a count above the document's size means a repeat.
size_t JsonObjectMemberCount(std::string_view object_text);

// Whether `text` holds a \u escape anywhere (in a key or in a string value). Such text names a
// key or value in other bytes than the ones a plain search for it would look for.
bool HasUnicodeEscape(std::string_view text);

}  // namespace bulkhead
