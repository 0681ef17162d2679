-- uses: batch_lib track_lib
-- TRACK GET. ARGV: P, jid, now. Returns {state, updated, percent or false, desc or false}, or
-- false when there is no live record.
local k = tlive(ARGV[2], ARGV[3])
if not k then return false end
return {redis.call('HGET', k, 'state') or '', redis.call('HGET', k, 'updated'),
        redis.call('HGET', k, 'percent'), redis.call('HGET', k, 'desc')}
