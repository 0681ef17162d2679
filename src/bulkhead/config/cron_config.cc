#include "bulkhead/config/cron_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "bulkhead/config/toml_line.h"

namespace bulkhead {
namespace {

using nlohmann::json;

json ToJson(const toml::node& node) {
  if (const auto* t = node.as_table()) {
    json out = json::object();
    for (auto&& [k, v] : *t) out[std::string(k.str())] = ToJson(v);
    return out;
  }
  if (const auto* a = node.as_array()) {
    json out = json::array();
    for (const auto& v : *a) out.push_back(ToJson(v));
    return out;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  std::ostringstream text;  // dates and times: as TOML writes them
  node.visit([&](auto&& v) { text << v; });
  return text.str();
}

class EntryReader {
 public:
  EntryReader(size_t number, const toml::table& table) : number_(number), table_(table) {}

  Result<CronEntry> Read() {
    if (const auto* job = table_.get("job"); job && job->is_table()) {
      if (const auto* type = job->as_table()->get("type"); type && type->is_string()) {
        label_ = " (" + type->as_string()->get() + ")";
      }
    }
    if (const auto* name = table_.get("name"); name && name->is_string()) {
      label_ = " (" + name->as_string()->get() + ")";
    }
    for (auto&& [k, v] : table_) {
      std::string key(k.str());
      if (key != "schedule" && key != "name" && key != "job") {
        return Error("unknown key " + key + " (schedule, name or [cron.job])", v);
      }
    }
    CronEntry entry;
    const toml::node* schedule = table_.get("schedule");
    if (!schedule) return Error("schedule is missing", table_);
    if (!schedule->is_string()) return Error("schedule must be a string", *schedule);
    auto parsed = CronSchedule::Parse(schedule->as_string()->get());
    if (!parsed.ok()) return Error("schedule: " + parsed.status().message(), *schedule);
    entry.schedule = std::move(*parsed);
    const toml::node* job = table_.get("job");
    if (!job || !job->is_table()) return Error("[cron.job] is missing", job ? *job : table_);
    auto doc = ReadJob(*job->as_table());
    if (!doc.ok()) return doc.status();
    entry.job_json = doc->dump();
    if (const toml::node* name = table_.get("name")) {
      if (!name->is_string() || name->as_string()->get().empty()) {
        return Error("name must be a non-empty string", *name);
      }
      entry.name = name->as_string()->get();
    }
    return entry;
  }

  std::string label() const { return label_; }

 private:
  Status Error(const std::string& what, const toml::node& node) const {
    return Status::InvalidArgument("cron entry " + std::to_string(number_) + label_ + ": " + what +
                                   TomlLine(node));
  }

  Result<json> ReadJob(const toml::table& job) const {
    json doc = json::object();
    for (auto&& [k, v] : job) {
      std::string key(k.str());
      std::string field = "job." + key;
      if (key == "type" || key == "queue") {
        if (!v.is_string() || v.as_string()->get().empty()) {
          return Error(field + " must be a non-empty string", v);
        }
        const std::string& text = v.as_string()->get();
        if (key == "queue" && !std::all_of(text.begin(), text.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                     c == '-';
            })) {
          return Error(field + " must match [a-zA-Z0-9._-]+ (a Faktory queue name)", v);
        }
        doc[key == "type" ? "jobtype" : "queue"] = text;
      } else if (key == "args") {
        if (!v.is_array()) return Error(field + " must be an array", v);
        doc["args"] = ToJson(v);
      } else if (key == "retry" || key == "reserve_for") {
        if (!v.is_integer()) return Error(field + " must be an integer", v);
        doc[key] = v.as_integer()->get();
      } else if (key == "custom") {
        if (!v.is_table()) return Error(field + " must be a table", v);
        doc["custom"] = ToJson(v);
      } else {
        return Error("unknown key " + field + " (type, queue, args, retry, reserve_for, custom)",
                     v);
      }
    }
    if (!doc.contains("jobtype")) return Error("job.type is missing", job);
    if (!doc.contains("queue")) doc["queue"] = "default";
    if (!doc.contains("args")) doc["args"] = json::array();
    return doc;
  }

  size_t number_;
  const toml::table& table_;
  std::string label_;
};

}  // namespace

Result<std::vector<CronEntry>> ReadCronEntries(const toml::node& node) {
  const toml::array* array = node.as_array();
  if (!array) {
    return Status::InvalidArgument("cron must be an array of [[cron]] tables" + TomlLine(node));
  }
  std::vector<CronEntry> entries;
  std::map<std::string, int> per_type;
  std::set<std::string> names;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    if (!item.is_table()) {
      return Status::InvalidArgument("cron entry " + std::to_string(i + 1) +
                                     " must be a table ([[cron]])" + TomlLine(item));
    }
    EntryReader reader(i + 1, *item.as_table());
    auto entry = reader.Read();
    if (!entry.ok()) return entry.status();
    if (entry->name.empty()) {
      std::string type = json::parse(entry->job_json)["jobtype"];
      int n = ++per_type[type];
      entry->name = n == 1 ? type : type + "#" + std::to_string(n);
    }
    if (!names.insert(entry->name).second) {
      return Status::InvalidArgument("cron entry " + std::to_string(i + 1) + reader.label() +
                                     ": name \"" + entry->name + "\" is taken by an earlier entry" +
                                     TomlLine(item));
    }
    entries.push_back(std::move(*entry));
  }
  return entries;
}

}  // namespace bulkhead
