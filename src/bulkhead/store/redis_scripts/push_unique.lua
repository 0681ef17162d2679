-- PUSH of a unique job. ARGV: P, jid, value, score, node, lock key, lock expiry (µs), now
-- (µs), key TTL (ms). Takes the lock and adds the job in one step. Returns 1, 0 when the jid is
-- held, -1 when another job holds the lock unexpired at `now`.
local jid, v, key = ARGV[2], ARGV[3], ARGV[6]
if redis.call('HEXISTS', JOBS, jid) == 1 then return 0 end
local holder = unique_holder(redis.call('GET', P .. 'unique:' .. key), ARGV[8])
if holder and holder ~= jid then return -1 end
release_unique(jid)
redis.call('SET', P .. 'unique:' .. key, jid .. '|' .. ARGV[7], 'PX', ARGV[9])
redis.call('SET', P .. 'unique_jid:' .. jid, key, 'PX', ARGV[9])
-- The lock index FLUSH deletes through (README): locks that ran out leave it here.
redis.call('ZREMRANGEBYSCORE', P .. 'unique_locks', '-inf', '(' .. ARGV[8])
redis.call('ZADD', P .. 'unique_locks', ARGV[7], key)
local h = parse(v)
redis.call('HSET', JOBS, jid, v)
link(jid, h, ARGV[4])
if h.state == 0 then wake(ARGV[5], h.queue) end
return 1
