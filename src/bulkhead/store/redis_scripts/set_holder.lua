-- Records the worker holding a reservation (README, "Reservation holders"). ARGV: P, jid,
-- wid. Only while `jid` is in the working set; unlink, reap and flush drop the entry when the job
-- leaves it. Returns 1, or 0 (no change) when jid is not reserved.
if not redis.call('ZSCORE', P .. 'working', ARGV[2]) then return 0 end
record_holder(ARGV[2], ARGV[3])
return 1
