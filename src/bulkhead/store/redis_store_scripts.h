// Internal to the Redis store (redis_*.cc): the store's scripts (StoreScripts, by Script) and how
// numbers cross into them and back.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bulkhead/redis/redis_reply.h"
#include "bulkhead/store/redis_scripts.h"
#include "bulkhead/store/store_callbacks.h"
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

// A reply callback for a call that only needs success: `done` gets OK or the call's error.
inline std::function<void(Result<RedisReply>)> OkOr(StoreCallbacks::Done done) {
  return
      [done = std::move(done)](Result<RedisReply> r) { done(r.ok() ? Status::Ok() : r.status()); };
}

// {field, value, ...} (HGETALL) as pairs ordered by field.
inline std::vector<std::pair<std::string, std::string>> SortedPairs(const RedisReply& r) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto& e = r.elements();
  for (size_t i = 0; i + 1 < e.size(); i += 2) out.emplace_back(e[i].str(), e[i + 1].str());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace bulkhead
