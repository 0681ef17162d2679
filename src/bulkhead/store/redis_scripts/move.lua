-- Moves an existing job. ARGV: P, jid, new value, score (sorted sets), node. Returns 1, or 0 when
-- the jid is unknown.
local jid = ARGV[2]
local v = redis.call('HGET', JOBS, jid)
if not v then return 0 end
unlink(jid, parse(v))
local h = parse(ARGV[3])
redis.call('HSET', JOBS, jid, ARGV[3])
link(jid, h, ARGV[4])
if h.state == 0 then wake(ARGV[5], h.queue) end
return 1
