-- ACK. ARGV: P, jid, day, now (µs). Ends the reservation, releases the job's unique lock (#13) and
-- counts one processed job in the same step.
-- Returns {header, score} of the job that was reserved, or false.
local jid = ARGV[2]
local v = redis.call('HGET', JOBS, jid)
if not v then return false end
local h = parse(v)
if h.state ~= 4 then return false end
local score = redis.call('ZSCORE', P .. 'working', jid)
unlink(jid, h)
redis.call('HDEL', JOBS, jid)
release_unique(jid)
count('processed', 1, ARGV[3])
bjob_ended(jid, true, ARGV[4])
tstate(jid, 'success', false, ARGV[4])
return {string.sub(v, 1, #v - #h.tail), score}
