#include "bulkhead/util/json_text.h"

#include <cstring>

namespace bulkhead {
namespace {

// kJsonWhitespace, compared byte by byte: the scan below asks for every byte of a job.
bool IsJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Calls `on_part(begin, end)` for each comma-separated part of the outermost array or object in
// `text` (the byte ranges between its opening bracket, its top-level commas and its closing
// bracket; none for an empty container). Strings are skipped whole, escapes included, so a
// bracket or comma inside one is never counted.
template <typename OnPart>
void ForEachTopLevelPart(std::string_view text, OnPart on_part) {
  text = TrimJsonWhitespace(text);
  if (text.size() < 2) return;
  const char* p = text.data() + 1;
  const char* end = text.data() + text.size() - 1;  // the closing bracket
  const char* part = p;
  bool any = false;
  int depth = 0;
  while (p < end) {
    char c = *p++;
    if (!IsJsonWhitespace(c)) any = true;
    if (c == '"') {
      while (p < end && *p != '"') p += (*p == '\\') ? 2 : 1;
      ++p;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      on_part(part, p - 1);
      part = p;
    }
  }
  if (any) on_part(part, end);
}

}  // namespace

std::vector<std::string_view> JsonArrayElements(std::string_view array_text) {
  std::vector<std::string_view> elements;
  ForEachTopLevelPart(array_text, [&](const char* begin, const char* end) {
    elements.push_back(TrimJsonWhitespace(std::string_view(begin, end - begin)));
  });
  return elements;
}

size_t JsonObjectMemberCount(std::string_view object_text) {
  size_t members = 0;
  ForEachTopLevelPart(object_text, [&](const char*, const char*) { ++members; });
  return members;
}

bool HasUnicodeEscape(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  while ((p = static_cast<const char*>(memchr(p, '\\', end - p))) != nullptr) {
    if (p + 1 < end && p[1] == 'u') return true;
    p += 2;  // the escaped character, which may itself be a backslash
    if (p >= end) break;
  }
  return false;
}

}  // namespace bulkhead
