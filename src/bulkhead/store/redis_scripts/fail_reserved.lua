-- uses: batch_lib track_lib
-- Ends a failed reservation if it is still the one the caller read. ARGV: P, jid, reserved_until_us,
-- next value ('' deletes the job), next score, count_failure ('1'/'0'), day, node, now (µs).
-- Returns 1, or 0 (no change) when jid is not reserved until reserved_until_us.
local jid = ARGV[2]
local v = redis.call('HGET', JOBS, jid)
if not v then return 0 end
local h = parse(v)
local score = redis.call('ZSCORE', P .. 'working', jid)
if h.state ~= 4 or not score or tonumber(score) ~= tonumber(ARGV[3]) then return 0 end
unlink(jid, h)
local died = false
if ARGV[4] == '' then
  redis.call('HDEL', JOBS, jid)
else
  local nh = parse(ARGV[4])
  died = nh.state == 3
  redis.call('HSET', JOBS, jid, ARGV[4])
  link(jid, nh, ARGV[5])
  if nh.state == 0 then wake(ARGV[8], nh.queue) end
end
count('processed', 1, ARGV[7])
if ARGV[6] == '1' then count('failures', 1, ARGV[7]) end
bjob_ended(jid, false, ARGV[9])
if died then tstate(jid, 'dead', false, ARGV[9]) else tstate(jid, 'failed', false, ARGV[9]) end
return 1
