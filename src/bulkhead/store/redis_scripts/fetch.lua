-- FETCH, one or more (the fetches of one turn of the caller's loop, in order). ARGV: P, node, then
-- per fetch: now_us, holder (a worker's wid, or ''), the number of its queues, its queues. Each
-- fetch in turn reserves the oldest job of its first non-empty, unpaused queue until its now + the
-- job's reserve_for, through `node`, and records its holder in {NS}:wid (#14) as set_holder.lua
-- does. Returns one element per fetch: {jid, value, score}, or false.
local node = ARGV[2]
-- Tracking is looked at only when a record exists (a FETCH creates none).
local tracked = redis.call('EXISTS', P .. 'track_expiry') == 1
local out, paused, empty = {}, {}, {}
local i = 3
while i <= #ARGV do
  local now, holder, n = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local got = false
  for k = i + 3, i + 2 + n do
    local q = ARGV[k]
    if paused[q] == nil then paused[q] = redis.call('SISMEMBER', P .. 'paused', q) == 1 end
    if not paused[q] and not empty[q] then
      local reserved = reserve_head(q, tonumber(now), node)
      if reserved then
        if tracked then tstate(reserved[1], 'working', false, now) end
        if holder ~= '' then record_holder(reserved[1], holder) end
        got = reserved
        break
      end
      empty[q] = true  -- no job enters a queue while this script runs
    end
  end
  out[#out + 1] = got
  i = i + 3 + n
end
return out
