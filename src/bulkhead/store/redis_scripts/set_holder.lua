-- Records the worker holding a reservation (#14; README, "Reservation holders"). ARGV: P, jid,
-- wid. Only while `jid` is in the working set; unlink, reap and flush drop the entry when the job
-- leaves it. Returns 1, or 0 (no change) when jid is not reserved.
local jid = ARGV[2]
if not redis.call('ZSCORE', P .. 'working', jid) then return 0 end
redis.call('HSET', P .. 'wid', jid, ARGV[3])
return 1
