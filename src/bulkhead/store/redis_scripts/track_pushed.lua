-- uses: batch_lib track_lib
-- A job pushed with custom.track = 1. ARGV: P, jid, now. Follows it as enqueued when the store
-- holds it outside working (a refused PUSH of an unknown batch leaves no job: nothing changes).
local jid, now = ARGV[2], ARGV[3]
local v = redis.call('HGET', JOBS, jid)
if not v or parse(v).state == 4 then return 0 end
tstate(jid, 'enqueued', true, now)
return 1
