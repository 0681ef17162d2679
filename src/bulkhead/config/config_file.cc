// LoadConfigFile (declared in config.h): the TOML file read through the settings table
// (settings.h). [jobtypes.NAME] and [throttles] are read here, being maps rather than rows.
#include <toml++/toml.h>

#include <filesystem>
#include <limits>
#include <set>

#include "bulkhead/config/config.h"
#include "bulkhead/config/cron_config.h"
#include "bulkhead/config/relay_config.h"
#include "bulkhead/config/settings.h"
#include "bulkhead/config/throttle_config.h"
#include "bulkhead/config/toml_line.h"

namespace bulkhead {
namespace {

// Keys that look like settings but are not, with the reason.
const std::pair<const char*, const char*> kNotSettings[] = {
    {"delivery.webpush.deadline_hours", "webpush jobs expire with their own ttl"},
};

// The dotted keys of the TOML tables that hold settings ("delivery", "delivery.webpush").
const std::set<std::string>& SettingTables() {
  static const std::set<std::string> tables = [] {
    std::set<std::string> t;
    for (const Setting& s : Settings()) {
      for (size_t dot = s.key.find('.'); dot != std::string::npos; dot = s.key.find('.', dot + 1)) {
        t.insert(s.key.substr(0, dot));
      }
    }
    return t;
  }();
  return tables;
}

// The value of a node as the setting types know them; nullopt for any other type (floats, dates,
// tables, arrays of non-strings). toml++'s value<int64_t>() would convert a float, which is
// undefined behaviour for 1e30, so integers are taken as integers only.
std::optional<SettingValue> ValueOf(const toml::node& node) {
  if (const auto* s = node.as_string()) return SettingValue(s->get());
  if (const auto* i = node.as_integer()) return SettingValue(i->get());
  if (const auto* b = node.as_boolean()) return SettingValue(b->get());
  if (const auto* a = node.as_array()) {
    std::vector<std::string> items;
    for (const toml::node& item : *a) {
      const auto* s = item.as_string();
      if (!s) return std::nullopt;
      items.push_back(s->get());
    }
    return SettingValue(std::move(items));
  }
  return std::nullopt;
}

// Reads one file into a Config. Errors name the file, the key and the line.
class ConfigFileReader {
 public:
  ConfigFileReader(std::string path, Config base) : path_(std::move(path)), c_(std::move(base)) {}

  Result<Config> Read(const toml::table& root) {
    if (Status s = ReadTable("", root); !s.ok()) return s;
    if (Status s = CheckOlderSpellings(); !s.ok()) return s;
    FindTlsFilesBesideTheConfig();
    return std::move(c_);
  }

 private:
  Status Error(const std::string& text, const toml::node& node) const {
    return Status::InvalidArgument("config file " + path_ + ": " + text + TomlLine(node.source()));
  }

  Status ReadTable(const std::string& prefix, const toml::table& table) {
    for (auto&& [name, node] : table) {
      std::string key =
          prefix.empty() ? std::string(name.str()) : prefix + "." + std::string(name.str());
      Status s;
      if (key == "jobtypes") {
        s = ReadJobtypes(node);
      } else if (key == "throttles") {
        s = ReadThrottleTable(node);
      } else if (key == "cron") {
        auto entries = ReadCronEntries(node);
        if (entries.ok()) c_.cron = std::move(*entries);
        s = entries.ok() ? Status::Ok()
                         : Status::InvalidArgument("config file " + path_ + ": " +
                                                   entries.status().message());
      } else if (key == "relay") {
        auto relay = ReadRelaySettings(node);
        if (relay.ok()) c_.relay = std::move(*relay);
        s = relay.ok()
                ? Status::Ok()
                : Status::InvalidArgument("config file " + path_ + ": " + relay.status().message());
      } else if (SettingTables().count(key)) {
        const toml::table* inner = node.as_table();
        s = inner ? ReadTable(key, *inner) : Error(key + " must be a table", node);
      } else {
        s = ReadSetting(key, node);
      }
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status ReadSetting(const std::string& key, const toml::node& node) {
    const Setting* setting = FindSetting(key);
    if (!setting) {
      for (const auto& [not_setting, why] : kNotSettings) {
        if (key == not_setting) return Error(key + " is not a setting: " + why, node);
      }
      return Error("unknown key " + key, node);
    }
    std::optional<SettingValue> value = ValueOf(node);
    if (!value) return Error(key + " must be " + ExpectedType(*setting), node);
    if (Status s = SetSetting(*setting, *value, c_); !s.ok()) return Error(s.message(), node);
    seen_.insert(key);
    return Status::Ok();
  }

  // [jobtypes.NAME] retry = N: a table per job type (not a row: its keys are job types).
  Status ReadJobtypes(const toml::node& node) {
    const toml::table* jobtypes = node.as_table();
    if (!jobtypes) return Error("jobtypes must be a table of [jobtypes.NAME] tables", node);
    for (auto&& [name, jnode] : *jobtypes) {
      std::string prefix = "jobtypes." + std::string(name.str());
      const toml::table* jt = jnode.as_table();
      if (!jt) return Error(prefix + " must be a table", jnode);
      for (auto&& [jk, jv] : *jt) {
        if (jk.str() != "retry")
          return Error("unknown key " + prefix + "." + std::string(jk.str()), jv);
        const auto* retry = jv.as_integer();
        if (!retry) return Error(prefix + ".retry must be an integer", jv);
        if (retry->get() < -1 || retry->get() > std::numeric_limits<int>::max()) {
          return Error(prefix + ".retry must be -1 or more, not " + std::to_string(retry->get()),
                       jv);
        }
        c_.jobtypes[std::string(name.str())].retry = static_cast<int>(retry->get());
      }
    }
    return Status::Ok();
  }

  // [throttles] QUEUE = { concurrency = N | worker = N, timeout = S } (throttle_config.h).
  Status ReadThrottleTable(const toml::node& node) {
    const toml::node* where = &node;
    Status s = ReadThrottles(node, c_.throttles, &where);
    return s.ok() ? s : Error(s.message(), *where);
  }

  Status CheckOlderSpellings() const {
    for (const Setting& s : Settings()) {
      if (!s.older_spelling_of.empty() && seen_.count(s.key) && seen_.count(s.older_spelling_of)) {
        return Status::InvalidArgument("config file " + path_ + ": set either " + s.key + " or " +
                                       s.older_spelling_of + ", not both");
      }
    }
    return Status::Ok();
  }

  // Faktory's convention: tls/public.crt and tls/private.key beside the configuration.
  void FindTlsFilesBesideTheConfig() {
    if (!c_.tls_cert_file.empty() || !c_.tls_key_file.empty()) return;
    std::filesystem::path dir = std::filesystem::path(path_).parent_path() / "tls";
    std::error_code ec;
    if (std::filesystem::exists(dir / "public.crt", ec) &&
        std::filesystem::exists(dir / "private.key", ec)) {
      c_.tls_cert_file = (dir / "public.crt").string();
      c_.tls_key_file = (dir / "private.key").string();
    }
  }

  std::string path_;
  Config c_;
  std::set<std::string> seen_;  // the setting keys the file set
};

}  // namespace

Result<Config> LoadConfigFile(const std::string& path, Config base) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument("config file " + path + ": " + std::string(e.description()) +
                                   TomlLine(e.source()));
  }
  return ConfigFileReader(path, std::move(base)).Read(root);
}

Result<Config> LoadConfigOrDefaults(const std::string& path) {
  if (path.empty()) return Config{};
  return LoadConfigFile(path);
}

}  // namespace bulkhead
