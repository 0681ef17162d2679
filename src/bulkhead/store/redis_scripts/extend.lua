-- Moves a reservation's expiry. ARGV: P, jid, until_us. Returns 1, or 0 when not reserved.
local v = redis.call('HGET', JOBS, ARGV[2])
if not v or parse(v).state ~= 4 then return 0 end
redis.call('ZADD', P .. 'working', 'XX', ARGV[3], ARGV[2])
return 1
