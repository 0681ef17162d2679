// The server's VAPID key on disk: `vapid_private_key_file`, or <data_dir>/vapid.pem, created on
// first use (PKCS#8 PEM, mode 0600) so that subscriptions made against its public key keep working
// across restarts.
#pragma once

#include <string>

#include "bulkhead/config/config.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The key file in effect for `config`.
std::string VapidKeyPath(const Config& config);

// Loads the key at `path`; when the file does not exist, generates one and saves it there
// (creating the directory), setting *created. Errors name the path.
Result<VapidKey> LoadOrCreateVapidKey(const std::string& path, bool* created = nullptr);

}  // namespace bulkhead
