-- uses: batch_lib track_lib
-- PUSH of a batch member. ARGV: P, jid, value, score, node, bid, now. Returns 1, 0 when the jid is
-- held, -1 when the batch is unknown or expired (nothing changes then).
local jid, v, bid = ARGV[2], ARGV[3], ARGV[6]
local k = blive(bid, ARGV[7])
if not k then return -1 end
if redis.call('HEXISTS', JOBS, jid) == 1 then return 0 end
local h = parse(v)
redis.call('HSET', JOBS, jid, v)
link(jid, h, ARGV[4])
if h.state == 0 then wake(ARGV[5], h.queue) end
redis.call('HSET', MEMBERS, jid, bid .. '\tp')
redis.call('HINCRBY', k, 'total', 1)
redis.call('HINCRBY', k, 'pending', 1)
return 1
