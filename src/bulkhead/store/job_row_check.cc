#include "bulkhead/store/job_row_check.h"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>

namespace bulkhead {
namespace {

// SAX handler that accepts a JSON object and captures its top-level "jid" when it is a string.
class PayloadCheck final : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t& v) override {
    if (depth_ == 1 && jid_key_) jid_ = v;
    return Value();
  }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override {
    if (depth_ == 0 && seen_root_) return false;
    is_object_ = is_object_ || depth_ == 0;
    seen_root_ = true;
    ++depth_;
    jid_key_ = false;
    return true;
  }
  bool key(string_t& k) override {
    jid_key_ = depth_ == 1 && k == "jid";
    return true;
  }
  bool end_object() override {
    --depth_;
    jid_key_ = false;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return false;  // the root must be an object
    ++depth_;
    jid_key_ = false;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  bool is_object() const { return is_object_; }
  const std::optional<std::string>& jid() const { return jid_; }

 private:
  bool Value() {
    jid_key_ = false;
    return depth_ > 0;  // a scalar root is not a job
  }
  int depth_ = 0;
  bool seen_root_ = false;
  bool is_object_ = false;
  bool jid_key_ = false;
  std::optional<std::string> jid_;
};

}  // namespace

std::string JobRowProblem(int state, const JobRecord& job) {
  if (state < static_cast<int>(JobState::kQueued) || state > static_cast<int>(JobState::kWorking)) {
    return "unknown state " + std::to_string(state);
  }
  PayloadCheck check;
  bool parsed = nlohmann::json::sax_parse(job.payload, &check);
  if (!parsed || !check.is_object()) return "payload is not a JSON object";
  if (!check.jid() || *check.jid() != job.jid) return "payload's jid is not the row's";
  return "";
}

}  // namespace bulkhead
