-- ACK, one or more (the ACKs of one turn of the caller's loop, in order). ARGV: P, day, then per
-- ACK: jid, now (µs). For each: ends the reservation, releases the job's unique lock (#13) and
-- counts one processed job in the same step.
-- Returns one element per ACK: {header, score} of the job that was reserved, or false.
-- Batches, tracking and unique locks are looked at only when their keys exist (an ACK creates
-- none of them), throttle slots once per queue. Every live unique lock is in unique_locks (a lock
-- that left it by running out is not held any more; its keys expire by themselves).
local batches = redis.call('EXISTS', P .. 'batch_members', P .. 'batch_cbs') > 0
local tracked = redis.call('EXISTS', P .. 'track_expiry') == 1
local uniques = redis.call('EXISTS', P .. 'unique_locks') == 1
local out, acked = {}, 0
for i = 3, #ARGV, 2 do
  local jid, now = ARGV[i], ARGV[i + 1]
  local v = redis.call('HGET', JOBS, jid)
  local h = v and parse_header(v)
  if not h or h.state ~= 4 then
    out[#out + 1] = false
  else
    local score = redis.call('ZSCORE', P .. 'working', jid)
    if SLOTLESS[h.queue] == nil then
      SLOTLESS[h.queue] = redis.call('EXISTS', P .. 'thr:' .. h.queue) == 0
    end
    unlink(jid, h)
    redis.call('HDEL', JOBS, jid)
    if uniques then release_unique(jid) end
    acked = acked + 1
    if batches then bjob_ended(jid, true, now) end
    if tracked then tstate(jid, 'success', false, now) end
    out[#out + 1] = {h.header, score}
  end
end
count('processed', acked, ARGV[2])
return out
