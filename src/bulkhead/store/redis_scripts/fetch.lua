-- FETCH, one or more (the fetches of one turn of the caller's loop, in order). ARGV: P, node, then
-- per fetch: now_us, the number of its queues, its queues. Each fetch in turn reserves the oldest
-- job of its first non-empty, unpaused queue until its now + the job's reserve_for, through
-- `node`. Returns one element per fetch: {jid, value, score}, or false.
local node = ARGV[2]
-- Tracking is looked at only when a record exists (a FETCH creates none).
local tracked = redis.call('EXISTS', P .. 'track_expiry') == 1
local out, paused, empty = {}, {}, {}
local i = 3
while i <= #ARGV do
  local now, n = ARGV[i], tonumber(ARGV[i + 1])
  local got = false
  for k = i + 2, i + 1 + n do
    local q = ARGV[k]
    if paused[q] == nil then paused[q] = redis.call('SISMEMBER', P .. 'paused', q) == 1 end
    if not paused[q] and not empty[q] then
      local reserved = reserve_head(q, tonumber(now), node)
      if reserved then
        if tracked then tstate(reserved[1], 'working', false, now) end
        got = reserved
        break
      end
      empty[q] = true  -- no job enters a queue while this script runs
    end
  end
  out[#out + 1] = got
  i = i + 2 + n
end
return out
