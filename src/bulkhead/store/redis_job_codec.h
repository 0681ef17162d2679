// RedisJobCodec: a job as the Redis store keeps it, `HEADER "\n" PAYLOAD` (the layout is in
// redis_scripts/README.md, "Job value"). The server-side scripts read and change the header; this
// is the C++ side of the same format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bulkhead/store/job_record.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The value for `job`. `node` names the node holding its reservation (working jobs only).
std::string EncodeRedisJob(const JobRecord& job, std::string_view node = {});

// The job `jid` from a stored value and its score (sorted sets: the score; queued jobs: 0). A
// header that marks the payload's enqueued_at as stale ('+') gets the payload rewritten with the
// header's time. InvalidArgument names what is wrong (the value came from outside bulkhead, or a
// newer layout).
Result<JobRecord> DecodeRedisJob(std::string_view jid, std::string_view value, int64_t score);

// Only the header of a value (or a header alone, as ACK and the scheduler return them): the job
// without its payload.
Result<JobRecord> DecodeRedisJobHeader(std::string_view jid, std::string_view header,
                                       int64_t score);

}  // namespace bulkhead
