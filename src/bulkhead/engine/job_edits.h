// The changes normalising a pushed job makes to its JSON (job_parser.h), gathered first and
// applied once. A job that only gains members keeps the client's own text with them appended: the
// parsed document is not written out again, which on the push path cost as much as parsing it.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "bulkhead/util/json_text.h"

namespace bulkhead {

class JobEdits {
 public:
  // Sets member `key` (a literal, ASCII, nothing to escape) to `value`; `present`: whether the
  // document holds `key` already. A string value must be ASCII with nothing JSON escapes (the
  // server's own texts: "default", RFC 3339 times). At most kMaxEdits edits.
  void Set(const char* key, std::string value, bool present);
  void Set(const char* key, int64_t value, bool present);
  // Removes member `key`, which the document holds.
  void Erase(const char* key);

  // The job's JSON with the edits made. When every edit adds a member and `source` is the text
  // `doc` was parsed from (no key given twice, no \u escape, which the payload screens could not
  // see through), that text with the members appended before its closing brace; otherwise `doc`
  // edited and written out (DumpJson), its keys then in sorted order.
  std::string Apply(nlohmann::json doc, std::string_view source) &&;

  // The parts of Apply, for a caller that knows more of the text than a document tells (a PUSHB
  // element's members, counted while it was parsed: job_array_parser.h).
  // Whether the job keeps `source` (trimmed) with the added members appended: every edit adds a
  // member, no key is given twice (`repeated_key()`, asked only when the rest holds: it may
  // scan the text) and the text holds no \u escape. Apply's rule, and the only place it is.
  template <typename RepeatedKey>
  bool KeepsText(std::string_view source, RepeatedKey repeated_key) const {
    return !source.empty() && OnlyAdds() && !repeated_key() && !HasUnicodeEscape(source);
  }
  // `source` (trimmed, ending with the object's closing brace) with the added members before it.
  std::string Appended(std::string_view source, bool empty_object) const;
  // `doc` edited and written out.
  std::string Rewritten(nlohmann::json doc) const;

  static constexpr size_t kMaxEdits = 6;

 private:
  struct Edit {
    const char* key = nullptr;
    std::variant<std::monostate, std::string, int64_t> value;  // monostate: erase
    bool present = false;
  };

  // Whether every edit adds a member (none replaces or removes one).
  bool OnlyAdds() const;

  std::array<Edit, kMaxEdits> edits_;
  size_t count_ = 0;
};

}  // namespace bulkhead
