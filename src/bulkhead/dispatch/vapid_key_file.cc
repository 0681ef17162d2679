#include "bulkhead/dispatch/vapid_key_file.h"

#include <filesystem>
#include <system_error>

namespace bulkhead {

std::string VapidKeyPath(const Config& config) {
  if (!config.vapid_private_key_file.empty()) return config.vapid_private_key_file;
  std::string dir = config.data_dir.empty() ? "." : config.data_dir;
  return dir + "/vapid.pem";
}

Result<VapidKey> LoadOrCreateVapidKey(const std::string& path, bool* created) {
  if (created) *created = false;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    auto key = VapidKey::LoadFile(path);
    if (!key.ok()) {
      return Status(key.status().code(), "VAPID key " + path + ": " + key.status().message());
    }
    return key;
  }
  auto key = VapidKey::Generate();
  if (!key.ok()) return key.status();
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::Unavailable("cannot create directory " + parent.string() +
                                 " for the VAPID key: " + ec.message());
    }
  }
  Status s = key->SaveFile(path);
  if (!s.ok()) return Status(s.code(), "VAPID key " + path + ": " + s.message());
  if (created) *created = true;
  return key;
}

}  // namespace bulkhead
