// StoreScripts: the Redis store's server-side scripts (redis_scripts/*.lua, embedded at build
// time; README.md there), each composed into the exact text to load into Redis: prelude.lua, then
// the libraries its first line names (`-- uses: batch_lib track_lib`), then the script, joined by
// newlines. Every script takes KEYS[1] = "{NS}:jobs" and ARGV[1] = "{NS}:"; each file's first
// lines say the rest. A script is known by its file name as a Script (redis_script_id.h, generated
// by CMakeLists.txt: fetch_throttled.lua is Script::kFetchThrottled), so adding one is adding its
// file.
#pragma once

#include <string_view>
#include <vector>

#include "bulkhead/redis/redis_script.h"
#include "bulkhead/store/redis_script_id.h"

namespace bulkhead {

class StoreScripts {
 public:
  // Composed and hashed (SHA1) once per process; immutable, so any thread may use it.
  static const StoreScripts& Get();

  const RedisScript& operator[](Script script) const {
    return scripts_[static_cast<size_t>(script)];
  }
  // Every script, in Script order (the SCRIPT LOADs of a connect).
  const std::vector<RedisScript>& all() const { return scripts_; }
  // The file name without ".lua".
  static std::string_view Name(Script script);

 private:
  StoreScripts();
  std::vector<RedisScript> scripts_;
};

}  // namespace bulkhead
