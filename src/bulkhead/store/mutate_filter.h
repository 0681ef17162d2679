// MutateFilter: which jobs of a sorted set a MUTATE command touches (Faktory semantics).
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "bulkhead/store/job_record.h"

namespace bulkhead {

struct MutateFilter {
  std::string jobtype;                   // empty: any jobtype
  std::unordered_set<std::string> jids;  // empty: any jid
  std::string glob;  // Redis SCAN MATCH style glob over the JSON payload; empty: any

  bool Matches(const JobRecord& job) const;
};

enum class MutateOp { kClear, kKill, kDiscard, kRequeue };

// Redis-style glob match: `*`, `?`, `[abc]`, `[^a]`/`[!a]`, `[a-z]`, `\` escapes.
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace bulkhead
