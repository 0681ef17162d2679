-- Deletes a job wherever it is. ARGV: P, jid. Returns 1, or 0 when unknown.
local v = redis.call('HGET', JOBS, ARGV[2])
if not v then return 0 end
unlink(ARGV[2], parse(v))
redis.call('HDEL', JOBS, ARGV[2])
return 1
