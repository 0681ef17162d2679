-- uses: track_lib
-- FETCH, one or more (the fetches of one turn of the caller's loop, in order). ARGV: P, node, then
-- per fetch: now_us, holder (a worker's wid, or ''), the number of its queues, its queues. Each
-- fetch in turn reserves the oldest job of its first non-empty, unpaused queue until its now + the
-- job's reserve_for, through `node`, and records its holder in {NS}:wid as set_holder.lua
-- does. Returns three elements per fetch, in one flat array: jid, value, score of the job it
-- reserved, or false, false, false (Redis converts every table a script returns, probing it for
-- its error and map fields: one table per job cost more than its three strings).
--
-- The fetches are answered as if each ran alone, in order, but with a few Redis calls for all of
-- them instead of six each (README, "One call for many jobs"): no job enters a queue while this
-- script runs, so each queue's length says how many of the fetches it serves; each queue then
-- gives its share in one LRANGE + LTRIM, the values come in one HMGET and go back in one HSET, the
-- reservations in one ZADD, SADD and HSET each.
local node = ARGV[2]
local fetches = {}
local i = 3
while i <= #ARGV do
  local n = tonumber(ARGV[i + 2])
  fetches[#fetches + 1] = {now = ARGV[i], holder = ARGV[i + 1], first = i + 3, last = i + 2 + n}
  i = i + 3 + n
end

-- The fetches one by one (reserve_head for each).
local function one_by_one(tracked)
  local out, paused, empty = {}, {}, {}
  for _, f in ipairs(fetches) do
    local got = false
    for k = f.first, f.last do
      local q = ARGV[k]
      if paused[q] == nil then paused[q] = redis.call('SISMEMBER', P .. 'paused', q) == 1 end
      if not paused[q] and not empty[q] then
        local reserved = reserve_head(q, tonumber(f.now), node)
        if reserved then
          if tracked then tstate(reserved[1], 'working', false, f.now) end
          if f.holder ~= '' then record_holder(reserved[1], f.holder) end
          got = reserved
          break
        end
        empty[q] = true  -- no job enters a queue while this script runs
      end
    end
    local m = #out
    if got then
      out[m + 1], out[m + 2], out[m + 3] = got[1], got[2], got[3]
    else
      out[m + 1], out[m + 2], out[m + 3] = false, false, false
    end
  end
  return out
end

-- Tracking is looked at only when a record exists (a FETCH creates none): then the fetches run
-- one by one, as the tracking records are written job by job.
if redis.call('EXISTS', P .. 'track_expiry') == 1 then return one_by_one(true) end

-- How many jobs each queue can still give (0 when paused), read once per queue.
local left = {}
local function jobs_left(q)
  if left[q] == nil then
    left[q] = redis.call('SISMEMBER', P .. 'paused', q) == 1 and 0 or redis.call('LLEN', P .. 'q:' .. q)
  end
  return left[q]
end
-- Each fetch in turn takes the next job of its first queue with one left.
local share, order, pick = {}, {}, {}
for n, f in ipairs(fetches) do
  for k = f.first, f.last do
    local q = ARGV[k]
    if jobs_left(q) > 0 then
      left[q] = left[q] - 1
      if not share[q] then
        share[q] = 0
        order[#order + 1] = q
      end
      share[q] = share[q] + 1
      pick[n] = q
      break
    end
  end
end
-- Each queue's share from its oldest end (the list's tail): tails[q] holds it newest first.
local tails, used, jids = {}, {}, {}
for _, q in ipairs(order) do
  local key = P .. 'q:' .. q
  tails[q] = redis.call('LRANGE', key, -share[q], -1)
  redis.call('LTRIM', key, 0, -share[q] - 1)
  used[q] = 0
  for _, jid in ipairs(tails[q]) do jids[#jids + 1] = jid end
end
local values = {}
if #jids > 0 then
  local got = call_many('HMGET', JOBS, jids)
  for k, jid in ipairs(jids) do
    if not got[k] then
      -- A listed jid without a job (these scripts never leave one): the shares were counted
      -- wrong. The queues get their jids back as they were, and the fetches run one by one
      -- (reserve_head drops such a jid).
      for _, q in ipairs(order) do call_many('RPUSH', P .. 'q:' .. q, tails[q]) end
      return one_by_one(false)
    end
    values[jid] = got[k]
  end
end

local out, sets, scores, reserved, holders = {}, {}, {}, {}, {}
local repl = reserved_repl(node)
for n, f in ipairs(fetches) do
  local q = pick[n]
  if not q then
    out[3 * n - 2], out[3 * n - 1], out[3 * n] = false, false, false
  else
    local tail = tails[q]
    local jid = tail[#tail - used[q]]  -- the oldest not yet taken
    used[q] = used[q] + 1
    local nv, reserve = reserved_value(values[jid], repl)
    local score = fmt_int(tonumber(f.now) + reserve * 1000000)
    sets[#sets + 1] = jid
    sets[#sets + 1] = nv
    scores[#scores + 1] = score
    scores[#scores + 1] = jid
    reserved[#reserved + 1] = jid
    if f.holder ~= '' then
      holders[#holders + 1] = jid
      holders[#holders + 1] = f.holder
    end
    out[3 * n - 2], out[3 * n - 1], out[3 * n] = jid, nv, score
  end
end
if #sets > 0 then
  call_many('HSET', JOBS, sets, 2)
  add_reservations(scores, reserved, node)
  if #holders > 0 then record_holders(holders) end
end
return out
