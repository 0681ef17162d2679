#include "bulkhead/store/mutate_filter.h"

#include <fnmatch.h>

namespace bulkhead {

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // fnmatch(3) without flags implements exactly the glob Redis uses for SCAN MATCH, except that
  // Redis also accepts '^' as set negation; translate it.
  std::string p(pattern);
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      continue;
    }
    if (p[i] == '[' && p[i + 1] == '^') p[i + 1] = '!';
  }
  return fnmatch(p.c_str(), std::string(text).c_str(), 0) == 0;
}

bool MutateFilter::Matches(const JobRecord& job) const {
  if (!jobtype.empty() && job.jobtype != jobtype) return false;
  if (!jids.empty() && !jids.contains(job.jid)) return false;
  if (!glob.empty() && !GlobMatch(glob, job.payload)) return false;
  return true;
}

}  // namespace bulkhead
