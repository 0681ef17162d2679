#include "bulkhead/dispatch/vapid_key_source.h"

#include <openssl/crypto.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "bulkhead/util/secret_file.h"

namespace bulkhead {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<std::string> NonEmpty(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  return std::string(s);
}

// The value of one `NAME=VALUE` line after the '=': quoted, or up to a " #" comment.
std::string_view EnvFileValue(std::string_view value) {
  value = Trim(value);
  if (!value.empty() && (value.front() == '"' || value.front() == '\'')) {
    size_t close = value.find(value.front(), 1);
    return close == std::string_view::npos ? value.substr(1) : value.substr(1, close - 1);
  }
  if (size_t comment = value.find(" #"); comment != std::string_view::npos) {
    value = value.substr(0, comment);
  }
  return value;
}

bool LooksLikePem(std::string_view text) { return text.find("-----BEGIN ") != std::string::npos; }

}  // namespace

VapidKeyVariables::~VapidKeyVariables() {
  if (private_key) OPENSSL_cleanse(private_key->data(), private_key->size());
}

VapidKeyVariables VapidKeyVariablesFromEnvironment() {
  VapidKeyVariables v;
  if (const char* p = std::getenv(kVapidPrivateKeyVariable)) v.private_key = NonEmpty(p);
  if (const char* p = std::getenv(kVapidPublicKeyVariable)) v.public_key = NonEmpty(p);
  return v;
}

VapidKeyVariables VapidKeyVariablesFromEnvFile(std::string_view text, std::string origin) {
  VapidKeyVariables v;
  v.origin = std::move(origin);
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = Trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.rfind("export ", 0) == 0) line = Trim(line.substr(7));
    size_t eq = line.find('=');
    if (line.empty() || line.front() == '#' || eq == std::string_view::npos) continue;
    std::string_view name = Trim(line.substr(0, eq));
    if (name == kVapidPrivateKeyVariable) {
      if (v.private_key) OPENSSL_cleanse(v.private_key->data(), v.private_key->size());
      v.private_key = NonEmpty(EnvFileValue(line.substr(eq + 1)));
    } else if (name == kVapidPublicKeyVariable) {
      v.public_key = NonEmpty(EnvFileValue(line.substr(eq + 1)));
    }
  }
  return v;
}

Result<std::optional<VapidKey>> VapidKeyFromVariables(const VapidKeyVariables& v) {
  if (!v.private_key) {
    if (v.public_key) {
      return Status::InvalidArgument(std::string(kVapidPublicKeyVariable) + " is set but " +
                                     kVapidPrivateKeyVariable + " is not (" + v.origin +
                                     "): bulkhead needs the private key to sign");
    }
    return std::optional<VapidKey>();
  }
  Result<VapidKey> key =
      VapidKey::FromBase64Url(*v.private_key, v.public_key.value_or(std::string()),
                              {kVapidPrivateKeyVariable, kVapidPublicKeyVariable});
  if (!key.ok()) return Status::InvalidArgument(key.status().message() + " (" + v.origin + ")");
  return std::optional<VapidKey>(std::move(*key));
}

std::string VapidKeyPath(const Config& config) {
  if (!config.vapid_private_key_file.empty()) return config.vapid_private_key_file;
  std::string dir = config.data_dir.empty() ? "." : config.data_dir;
  return dir + "/vapid.pem";
}

Result<VapidKey> LoadVapidKeyFile(const std::string& path) {
  Result<std::string> text = ReadSecretFile(path, "VAPID key");
  if (!text.ok()) return text.status();
  Result<VapidKey> key = Status::Internal("unread");
  if (LooksLikePem(*text)) {
    key = VapidKey::FromPem(*text);
  } else {
    Result<std::optional<VapidKey>> from =
        VapidKeyFromVariables(VapidKeyVariablesFromEnvFile(*text, path));
    if (!from.ok()) {
      key = from.status();
    } else if (!from->has_value()) {
      key =
          Status::InvalidArgument("holds neither a PEM private key nor a VAPID_PRIVATE_KEY= line");
    } else {
      key = std::move(**from);
    }
  }
  OPENSSL_cleanse(text->data(), text->size());
  if (!key.ok()) {
    return Status(key.status().code(), "VAPID key " + path + ": " + key.status().message());
  }
  return key;
}

Status SaveVapidKey(const VapidKey& key, const std::string& path) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::Unavailable("cannot create directory " + parent.string() +
                                 " for the VAPID key: " + ec.message());
    }
  }
  Status s = key.SaveFile(path);
  if (!s.ok()) return Status(s.code(), "VAPID key " + path + ": " + s.message());
  return Status::Ok();
}

Result<VapidKey> LoadOrCreateVapidKey(const std::string& path, bool* created) {
  if (created) *created = false;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return LoadVapidKeyFile(path);
  auto key = VapidKey::Generate();
  if (!key.ok()) return key.status();
  if (Status s = SaveVapidKey(*key, path); !s.ok()) return s;
  if (created) *created = true;
  return key;
}

Result<ServerVapidKey> ResolveVapidKey(const Config& config, const VapidKeyVariables& variables,
                                       bool create) {
  const std::string path = VapidKeyPath(config);
  Result<std::optional<VapidKey>> from_env = VapidKeyFromVariables(variables);
  if (!from_env.ok()) return from_env.status();
  if (from_env->has_value()) {
    ServerVapidKey out{std::move(**from_env),
                       std::string(kVapidPrivateKeyVariable) + " (" + variables.origin + ")", false,
                       std::string()};
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      Result<VapidKey> file = LoadVapidKeyFile(path);
      if (file.ok() && file->public_key() != out.key.public_key()) {
        out.warning = std::string(kVapidPrivateKeyVariable) + " wins over " + path +
                      ", which holds another key (public key " + file->public_key_b64url() +
                      "); subscriptions made for that key are not signed for";
      }
    }
    return out;
  }
  bool created = false;
  Result<VapidKey> key = create ? LoadOrCreateVapidKey(path, &created) : LoadVapidKeyFile(path);
  if (!key.ok()) return key.status();
  return ServerVapidKey{std::move(*key), path, created, std::string()};
}

}  // namespace bulkhead
