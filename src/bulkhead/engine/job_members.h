// JobMembers: what checking a pushed job reads of its top-level members (job_parser.h), taken from
// a parsed document (MembersOf) or collected while a PUSHB array is parsed, without a document
// (job_array_parser.h). Each member keeps its JSON type and only the value the checks look at, so
// that both paths check a job the same way.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace simdjson::dom {
class object;
}  // namespace simdjson::dom

namespace bulkhead {

struct JobMember {
  enum class Type : uint8_t {
    kAbsent,
    kNull,
    kBoolean,
    kInteger,   // a negative integer, or one that fits int64
    kUnsigned,  // a non-negative integer (nlohmann's number_unsigned)
    kFloat,
    kString,
    kArray,
    kObject,
  };
  Type type = Type::kAbsent;
  std::string text;     // kString: the value
  int64_t integer = 0;  // kInteger; kUnsigned converted as nlohmann's get<int64_t> converts it
  double real = 0;      // kFloat

  bool present() const { return type != Type::kAbsent; }
  bool is_null() const { return type == Type::kNull; }
  bool is_string() const { return type == Type::kString; }
  bool is_integer() const { return type == Type::kInteger || type == Type::kUnsigned; }
  bool is_number() const { return is_integer() || type == Type::kFloat; }
  // Present, not null and not "": what the checks count as given.
  bool is_nonempty_string() const { return is_string() && !text.empty(); }
};

struct JobMembers {
  JobMember jid, jobtype, args, queue, reserve_for, retry, created_at, at, enqueued_at, custom;
  // The object's members, a key given twice counted twice (then `repeated_key`).
  size_t count = 0;
  bool repeated_key = false;

  // The member read for `key`, or null for a key the checks do not read.
  JobMember* Find(std::string_view key);
};

// The members of a parsed job object (`object.is_object()`). A document holds each key once.
JobMembers MembersOf(const nlohmann::json& object);

// The members of a job object of simdjson's document (simd_json.h), as nlohmann's SAX events
// would give them: a repeated key counted each time (and `repeated_key` set), its last value
// the one read.
JobMembers MembersOf(const simdjson::dom::object& object);

// Whether any key of `keys` (an object's, in order) is given twice.
template <typename Key>
bool AnyRepeated(const std::vector<Key>& keys) {
  if (keys.size() <= 16) {  // a job's usual few keys: compared pairwise, nothing allocated
    for (size_t i = 1; i < keys.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (keys[i] == keys[j]) return true;
      }
    }
    return false;
  }
  std::vector<std::string_view> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

}  // namespace bulkhead
