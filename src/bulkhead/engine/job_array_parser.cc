#include "bulkhead/engine/job_array_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bulkhead/engine/job_edits.h"
#include "bulkhead/engine/job_members.h"
#include "bulkhead/util/bounded_sax.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/json_text.h"
#include "bulkhead/util/simd_json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using json = nlohmann::json;
using Type = JobMember::Type;

// The SAX events of a PUSHB text, kept as each element's members. Depth counts the containers
// open around the value that comes next: 0 the text itself, 1 an element, 2 a job's member.
class MembersCollector {
 public:
  explicit MembersCollector(size_t max_elements) : max_elements_(max_elements) {}

  struct Element {
    bool object = false;
    JobMembers members;
  };

  // What the events of the text `root` was parsed from would collect, read from its document
  // instead (simd_json.h): the fast path.
  void CollectDocument(const simdjson::dom::element& root) {
    is_array_ = root.is_array();
    if (!is_array_) return;
    simdjson::dom::array array = root.get_array().value_unsafe();
    if (array.size() > max_elements_) {
      too_many_ = true;
      return;
    }
    elements_.reserve(array.size());
    for (simdjson::dom::element e : array) {
      if (!e.is_object()) {
        elements_.push_back(Element{.object = false});
        continue;
      }
      elements_.push_back(
          Element{.object = true, .members = MembersOf(e.get_object().value_unsafe())});
    }
  }

  bool is_array() const { return is_array_; }
  // The array had more than max_elements elements: collecting stopped there.
  bool too_many() const { return too_many_; }
  std::vector<Element>& elements() { return elements_; }

  bool null() {
    return Scalar([](JobMember&) {}, Type::kNull);
  }
  bool boolean(bool) {
    return Scalar([](JobMember&) {}, Type::kBoolean);
  }
  bool number_integer(json::number_integer_t v) {
    return Scalar([v](JobMember& m) { m.integer = v; }, Type::kInteger);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return Scalar([v](JobMember& m) { m.integer = static_cast<int64_t>(v); }, Type::kUnsigned);
  }
  bool number_float(json::number_float_t v, const json::string_t&) {
    return Scalar([v](JobMember& m) { m.real = v; }, Type::kFloat);
  }
  bool string(json::string_t& v) {
    return Scalar([&v](JobMember& m) { m.text = v; }, Type::kString);
  }
  bool binary(json::binary_t&) {
    return Scalar([](JobMember&) {}, Type::kObject);
  }
  bool start_object(std::size_t) {
    if (depth_ == 1 && is_array_) {
      if (!AddElement(true)) return false;
      keys_.clear();
    }
    return Open(Type::kObject);
  }
  bool key(json::string_t& k) {
    if (depth_ != 2 || !is_array_) return true;
    JobMembers& members = elements_.back().members;
    ++members.count;
    keys_.push_back(k);
    target_ = members.Find(k);
    return true;
  }
  bool end_object() {
    if (--depth_ == 1 && is_array_) elements_.back().members.repeated_key = AnyRepeated(keys_);
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 0) is_array_ = true;
    if (depth_ == 1 && is_array_ && !AddElement(false)) return false;
    return Open(Type::kArray);
  }
  bool end_array() {
    --depth_;
    return true;
  }

 private:
  // A value at depth 1 that is not an object is an element of its own; at depth 2 the value of
  // the member `target_` (replacing an earlier one of the same key: the last one counts).
  template <typename Set>
  bool Scalar(Set set, Type type) {
    if (depth_ == 1 && is_array_ && !AddElement(false)) return false;
    if (depth_ == 2 && target_ != nullptr) {
      *target_ = JobMember{.type = type};
      set(*target_);
      target_ = nullptr;
    }
    return true;
  }
  // Starts the array's next element; past max_elements, stops the parse instead (too_many_).
  bool AddElement(bool object) {
    too_many_ = elements_.size() >= max_elements_;
    if (!too_many_) elements_.push_back(Element{.object = object});
    return !too_many_;
  }
  bool Open(Type type) {
    if (depth_ == 2 && target_ != nullptr) {
      *target_ = JobMember{.type = type};
      target_ = nullptr;
    }
    ++depth_;
    return true;
  }
  const size_t max_elements_;
  bool is_array_ = false;
  bool too_many_ = false;
  int depth_ = 0;
  JobMember* target_ = nullptr;
  std::vector<std::string> keys_;  // the current element's keys, in order
  std::vector<Element> elements_;
};

// A job of the array, its record checked, its payload the element's text with the edits made.
Result<JobRecord> JobOf(const MembersCollector::Element& element, std::string_view text,
                        TimePoint now, const std::string& now_text, int max_json_depth,
                        const RetryDefault& retry_for) {
  if (!element.object) return Status::InvalidArgument("job must be a JSON object");
  JobEdits edits;
  auto job = CheckJobMembers(element.members, now, now_text, retry_for, edits);
  if (!job.ok()) return job;
  if (edits.KeepsText(text, [&] { return element.members.repeated_key; })) {
    job->payload = edits.Appended(text, element.members.count == 0);
    return job;
  }
  auto doc = ParseJson(text, max_json_depth);  // accepted within the array: accepted alone
  if (!doc.ok()) return doc.status();
  job->payload = edits.Rewritten(std::move(*doc));
  return job;
}

// The array parsed into a document, each element checked by ParseJobDocument and written out
// again: should the elements' texts not be found (JsonArrayElements assumes accepted text).
Result<JobArray> ByDocument(std::string_view text, TimePoint now, int max_json_depth,
                            const RetryDefault& retry_for) {
  auto doc = ParseJson(text, max_json_depth);
  if (!doc.ok()) return doc.status();
  JobArray out{.is_array = true};
  for (json& element : *doc) {
    auto jid = element.is_object() ? element.find("jid") : element.end();
    out.jobs.push_back(ArrayJob{
        .jid = jid != element.end() && jid->is_string() ? jid->get<std::string>() : std::string(),
        .job = ParseJobDocument(std::move(element), now, retry_for)});
  }
  return out;
}

}  // namespace

Result<JobArray> ParseJobArray(std::string_view text, TimePoint now, int max_json_depth,
                               const RetryDefault& retry_for, int max_jobs) {
  MembersCollector collector(static_cast<size_t>(std::max(max_jobs, 0)));
  simdjson::dom::element root;
  Status parsed = Status::Ok();
  if (SimdJsonParse(text, max_json_depth, root)) {
    collector.CollectDocument(root);
  } else {
    // nlohmann's verdict on what the fast path refused, with ParseJson's error.
    parsed = ParseBounded(text, collector, max_json_depth);
  }
  if (collector.too_many()) {
    return Status::InvalidArgument("PUSHB holds more than " + std::to_string(max_jobs) +
                                   " jobs (max_pushb_jobs)");
  }
  if (!parsed.ok()) return parsed;
  JobArray out;
  out.is_array = collector.is_array();
  if (!out.is_array) return out;
  auto& elements = collector.elements();
  std::vector<std::string_view> texts = JsonArrayElements(text);
  if (texts.size() != elements.size()) return ByDocument(text, now, max_json_depth, retry_for);
  const std::string now_text = FormatRfc3339(now);
  out.jobs.reserve(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    const JobMember& jid = elements[i].members.jid;
    out.jobs.push_back(
        ArrayJob{.jid = elements[i].object && jid.is_string() ? jid.text : std::string(),
                 .job = JobOf(elements[i], texts[i], now, now_text, max_json_depth, retry_for)});
  }
  return out;
}

}  // namespace bulkhead
