#include "bulkhead/engine/job_edits.h"

#include <cassert>
#include <nlohmann/json.hpp>

#include "bulkhead/util/json.h"
#include "bulkhead/util/json_text.h"

namespace bulkhead {

void JobEdits::Set(const char* key, std::string value, bool present) {
  assert(count_ < kMaxEdits);
  edits_[count_++] = Edit{key, std::move(value), present};
}

void JobEdits::Set(const char* key, int64_t value, bool present) {
  assert(count_ < kMaxEdits);
  edits_[count_++] = Edit{key, value, present};
}

void JobEdits::Erase(const char* key) {
  assert(count_ < kMaxEdits);
  edits_[count_++] = Edit{key, std::monostate{}, true};
}

std::string JobEdits::Apply(nlohmann::json doc, std::string_view source) && {
  source = TrimJsonWhitespace(source);
  if (KeepsText(source, [&] { return JsonObjectMemberCount(source) != doc.size(); })) {
    return Appended(source, doc.empty());
  }
  return Rewritten(std::move(doc));
}

bool JobEdits::OnlyAdds() const {
  for (size_t i = 0; i < count_; ++i) {
    if (edits_[i].present) return false;
  }
  return true;
}

// `source` ends with the object's closing brace; the members go before it.
std::string JobEdits::Appended(std::string_view source, bool empty_object) const {
  std::string out;
  out.reserve(source.size() + 48 * count_);
  out.append(source.data(), source.size() - 1);
  bool first = empty_object;
  for (size_t i = 0; i < count_; ++i) {
    const Edit& edit = edits_[i];
    if (!first) out += ',';
    first = false;
    out += '"';
    out += edit.key;
    out += "\":";
    if (const auto* text = std::get_if<std::string>(&edit.value)) {
      out += '"';
      out += *text;
      out += '"';
    } else {
      out += std::to_string(std::get<int64_t>(edit.value));
    }
  }
  out += '}';
  return out;
}

std::string JobEdits::Rewritten(nlohmann::json doc) const {
  for (size_t i = 0; i < count_; ++i) {
    const Edit& edit = edits_[i];
    if (const auto* text = std::get_if<std::string>(&edit.value)) {
      doc[edit.key] = *text;
    } else if (const auto* number = std::get_if<int64_t>(&edit.value)) {
      doc[edit.key] = *number;
    } else {
      doc.erase(edit.key);
    }
  }
  return DumpJson(doc);
}

}  // namespace bulkhead
