// The push relay's apps (docs/relay.md): the [[relay.apns]] and [[relay.fcm]] arrays of tables of
// the config file, one table per app.
//   [[relay.apns]]
//     name = "toot"                       # required: the app's name in URLs, metrics, the
//     dashboard topic = "cx.c3.toot"                # required: the app's bundle id (apns-topic)
//     team_id = "ABCDE12345"              # token authentication (Apple's preferred):
//     key_id = "KEY1234567"               #   the .p8 key's id, its team, and the file
//     key_file = "/etc/bulkhead/AuthKey_KEY1234567.p8"
//     certificate_file = "/etc/bulkhead/toot.p12"   # or certificate authentication (.p12 or PEM)
//     certificate_password_file = "/etc/bulkhead/toot.pass"  # optional: the .p12's password
//     production_url = "https://api.push.apple.com"           # defaults: Apple's
//     development_url = "https://api.sandbox.push.apple.com"
//     default = true                      # the app of the compatible URLs without an app segment
//     rate_per_second = 1000              # optional limits (429 past them)
//     burst = 2000
//     token_per_minute = 60
//     token_burst = 20
//   [[relay.fcm]]
//     name = "tusky"
//     service_account_file = "/etc/bulkhead/tusky-firebase.json"  # required
//     project = "tusky-12345"             # default: the service account's project_id
//     url = "https://fcm.googleapis.com"  # default: Google's
//     token_url = ""                      # default: the service account's token_uri
//     default, rate_per_second, burst, token_per_minute, token_burst: as above
// Credentials stay in their files: only the paths are configuration.
#pragma once

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "bulkhead/util/status.h"

namespace bulkhead {

// Accepted messages per app and per device token: token buckets (rate, burst); 0 rate = no limit.
struct RelayLimits {
  int rate_per_second = 1000;
  int burst = 2000;
  int token_per_minute = 60;
  int token_burst = 20;
};

struct RelayApnsApp {
  std::string name;
  std::string topic;
  std::string team_id;
  std::string key_id;
  std::string key_file;
  std::string certificate_file;
  std::string certificate_password_file;
  std::string production_url = "https://api.push.apple.com";
  std::string development_url = "https://api.sandbox.push.apple.com";
  bool is_default = false;
  RelayLimits limits;
};

struct RelayFcmApp {
  std::string name;
  std::string service_account_file;
  std::string project;
  std::string url = "https://fcm.googleapis.com";
  std::string token_url;
  bool is_default = false;
  RelayLimits limits;
};

struct RelaySettings {
  std::vector<RelayApnsApp> apns;
  std::vector<RelayFcmApp> fcm;
  bool empty() const { return apns.empty() && fcm.empty(); }
};

// Reads the `relay` table (its `apns` and `fcm` arrays of tables). InvalidArgument names the app
// (its kind, number from 1 and name), the key, the problem and the line: unknown keys, wrong
// types, a missing name, topic or credential, both or neither authentication, two apps of one
// kind with one name, a name the URLs reserve, two defaults of one kind.
Result<RelaySettings> ReadRelaySettings(const toml::node& node);

// The app names the compatible URLs use as their first segment, so no app may be called so.
bool IsReservedRelayAppName(const std::string& name);

}  // namespace bulkhead
