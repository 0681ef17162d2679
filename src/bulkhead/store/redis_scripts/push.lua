-- PUSH. ARGV: P, jid, value, score (scheduled: due time), node. Returns 1, or 0 when the jid is held.
local jid, v = ARGV[2], ARGV[3]
if redis.call('HEXISTS', JOBS, jid) == 1 then return 0 end
local h = parse(v)
redis.call('HSET', JOBS, jid, v)
link(jid, h, ARGV[4])
if h.state == 0 then wake(ARGV[5], h.queue) end
return 1
