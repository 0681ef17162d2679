// Internal to redis_store*.cc: the store's scripts (StoreScripts, by Script) and how numbers cross
// into them and back.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>

#include "bulkhead/store/redis_scripts.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

// Numbers cross into the scripts as decimal strings (redis_scripts/README.md): a count, or a time
// as µs since the epoch.
inline std::string Us(int64_t v) { return std::to_string(v); }
inline std::string Us(TimePoint t) { return std::to_string(ToUnixMicros(t)); }
// A sorted-set score as a script answers it (a bulk string such as "1700000060000000", or an
// integer), as µs.
inline int64_t ScoreMicros(const RedisReply& r) {
  if (r.is_integer()) return r.integer();
  return static_cast<int64_t>(std::llround(std::strtod(r.str().c_str(), nullptr)));
}

}  // namespace bulkhead
