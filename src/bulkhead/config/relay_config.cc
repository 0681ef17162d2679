#include "bulkhead/config/relay_config.h"

#include <functional>
#include <map>
#include <set>

#include "bulkhead/config/toml_line.h"

namespace bulkhead {
namespace {

// App names: what a URL segment and a metric label may hold without escaping.
bool IsAppName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Reads one app's table: every key through its field setter, then the app's own checks.
class AppReader {
 public:
  using Setter = std::function<std::string(const toml::node&)>;

  AppReader(std::string kind, size_t number, const toml::table& table)
      : kind_(std::move(kind)), number_(number), table_(table) {
    if (const auto* n = table.get("name"); n && n->is_string()) label_ = n->as_string()->get();
  }

  void String(const char* key, std::string& out) {
    setters_[key] = [&out](const toml::node& n) -> std::string {
      if (!n.is_string()) return "must be a string";
      out = n.as_string()->get();
      return "";
    };
  }
  void Int(const char* key, int& out) {
    setters_[key] = [&out](const toml::node& n) -> std::string {
      const auto* i = n.as_integer();
      if (!i || i->get() < 0 || i->get() > 1'000'000'000) {
        return "must be an integer from 0 to 1000000000";
      }
      out = static_cast<int>(i->get());
      return "";
    };
  }
  void Bool(const char* key, bool& out) {
    setters_[key] = [&out](const toml::node& n) -> std::string {
      if (!n.is_boolean()) return "must be true or false";
      out = n.as_boolean()->get();
      return "";
    };
  }
  void Limits(RelayLimits& l) {
    Int("rate_per_second", l.rate_per_second);
    Int("burst", l.burst);
    Int("token_per_minute", l.token_per_minute);
    Int("token_burst", l.token_burst);
  }

  Status ReadAll() {
    for (auto&& [k, v] : table_) {
      std::string key(k.str());
      auto it = setters_.find(key);
      if (it == setters_.end()) return Error("unknown key " + key, v);
      if (std::string problem = it->second(v); !problem.empty()) {
        return Error(key + " " + problem, v);
      }
    }
    return Status::Ok();
  }

  Status Error(const std::string& text, const toml::node& where) const {
    std::string who = "relay." + kind_ + " #" + std::to_string(number_);
    if (!label_.empty()) who += " (" + label_ + ")";
    return Status::InvalidArgument(who + ": " + text + TomlLine(where));
  }
  Status Error(const std::string& text) const { return Error(text, table_); }

 private:
  std::string kind_;
  size_t number_;
  const toml::table& table_;
  std::string label_;
  std::map<std::string, Setter> setters_;
};

Status CheckName(const AppReader& reader, const std::string& name) {
  if (name.empty()) return reader.Error("name is missing");
  if (!IsAppName(name)) {
    return reader.Error("name must be 1 to 64 letters, digits, '_', '-' or '.', not \"" + name +
                        "\"");
  }
  if (IsReservedRelayAppName(name)) {
    return reader.Error("name \"" + name + "\" is a word of the relay's URLs; choose another");
  }
  return Status::Ok();
}

Result<RelayApnsApp> ReadApns(size_t number, const toml::table& table) {
  RelayApnsApp app;
  AppReader r("apns", number, table);
  r.String("name", app.name);
  r.String("topic", app.topic);
  r.String("team_id", app.team_id);
  r.String("key_id", app.key_id);
  r.String("key_file", app.key_file);
  r.String("certificate_file", app.certificate_file);
  r.String("certificate_password_file", app.certificate_password_file);
  r.String("production_url", app.production_url);
  r.String("development_url", app.development_url);
  r.Bool("default", app.is_default);
  r.Limits(app.limits);
  if (Status s = r.ReadAll(); !s.ok()) return s;
  if (Status s = CheckName(r, app.name); !s.ok()) return s;
  if (app.topic.empty()) return r.Error("topic (the app's bundle id) is missing");
  const bool token = !app.key_file.empty();
  const bool cert = !app.certificate_file.empty();
  if (token == cert) {
    return r.Error(
        "give either key_file (with key_id and team_id: token authentication) or "
        "certificate_file (certificate authentication)");
  }
  if (token && (app.key_id.empty() || app.team_id.empty())) {
    return r.Error("key_file needs key_id and team_id");
  }
  return app;
}

Result<RelayFcmApp> ReadFcm(size_t number, const toml::table& table) {
  RelayFcmApp app;
  AppReader r("fcm", number, table);
  r.String("name", app.name);
  r.String("service_account_file", app.service_account_file);
  r.String("project", app.project);
  r.String("url", app.url);
  r.String("token_url", app.token_url);
  r.Bool("default", app.is_default);
  r.Limits(app.limits);
  if (Status s = r.ReadAll(); !s.ok()) return s;
  if (Status s = CheckName(r, app.name); !s.ok()) return s;
  if (app.service_account_file.empty()) return r.Error("service_account_file is missing");
  return app;
}

// Reads the array `key` of `relay` with `read`, checking names and defaults across it.
template <typename App, typename ReadOne>
Status ReadArray(const toml::table& relay, const char* key, ReadOne read, std::vector<App>& out) {
  const toml::node* node = relay.get(key);
  if (!node) return Status::Ok();
  const toml::array* array = node->as_array();
  if (!array) {
    return Status::InvalidArgument(std::string("relay.") + key +
                                   " must be an array of tables ([[relay." + key + "]])" +
                                   TomlLine(*node));
  }
  std::set<std::string> names;
  int defaults = 0;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::table* t = (*array)[i].as_table();
    if (!t) {
      return Status::InvalidArgument(std::string("relay.") + key + " #" + std::to_string(i + 1) +
                                     " must be a table" + TomlLine((*array)[i]));
    }
    auto app = read(i + 1, *t);
    if (!app.ok()) return app.status();
    if (!names.insert(app->name).second) {
      return Status::InvalidArgument(std::string("relay.") + key + ": two apps are called \"" +
                                     app->name + "\"" + TomlLine(*t));
    }
    defaults += app->is_default ? 1 : 0;
    if (defaults > 1) {
      return Status::InvalidArgument(std::string("relay.") + key +
                                     ": only one app may be the default" + TomlLine(*t));
    }
    out.push_back(std::move(*app));
  }
  return Status::Ok();
}

}  // namespace

bool IsReservedRelayAppName(const std::string& name) {
  return name == "production" || name == "development" || name == "fcm" || name == "_health";
}

Result<RelaySettings> ReadRelaySettings(const toml::node& node) {
  const toml::table* relay = node.as_table();
  if (!relay) return Status::InvalidArgument("relay must be a table" + TomlLine(node));
  for (auto&& [k, v] : *relay) {
    if (k.str() != "apns" && k.str() != "fcm") {
      return Status::InvalidArgument("unknown key relay." + std::string(k.str()) +
                                     " ([[relay.apns]] or [[relay.fcm]])" + TomlLine(v));
    }
  }
  RelaySettings settings;
  if (Status s = ReadArray(*relay, "apns", ReadApns, settings.apns); !s.ok()) return s;
  if (Status s = ReadArray(*relay, "fcm", ReadFcm, settings.fcm); !s.ok()) return s;
  for (const RelayApnsApp& a : settings.apns) {
    for (const RelayFcmApp& f : settings.fcm) {
      if (a.name == f.name) {
        return Status::InvalidArgument("relay: an APNs and an FCM app are both called \"" + a.name +
                                       "\"; names are the apps' URL segment and "
                                       "metric label, so they must differ");
      }
    }
  }
  return settings;
}

}  // namespace bulkhead
