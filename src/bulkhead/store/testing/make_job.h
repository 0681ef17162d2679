// MakeJob: a small no-op job record for store tests, its payload a JSON object naming it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "bulkhead/store/job_record.h"

namespace bulkhead {

inline JobRecord MakeJob(const std::string& jid, const std::string& queue = "default",
                         JobState state = JobState::kQueued, int64_t score = 0) {
  JobRecord j;
  j.jid = jid;
  j.queue = queue;
  j.jobtype = "noop";
  j.payload =
      nlohmann::json{
          {"jid", jid}, {"jobtype", "noop"}, {"queue", queue}, {"args", nlohmann::json::array()}}
          .dump();
  j.state = state;
  j.score = score;
  j.reserve_for_s = 60;
  return j;
}

}  // namespace bulkhead
