-- uses: track_lib
-- FETCH with queue throttles. ARGV: P, now_us, node, wid, n, then n throttles as
-- (queue, limit, per_worker '1'/'0', timeout_us), then the queues in order. As fetch.lua, except
-- that a throttled queue whose slots are all held (in all, or by `wid` when per_worker) counts as
-- empty, and a job of a throttled queue takes a slot (see the README, "Queue throttles"). A
-- non-empty `wid` is recorded as the job's holder in {NS}:wid, as fetch.lua does.
-- Returns {jid, value, score} or false.
local now = tonumber(ARGV[2])
local wid = ARGV[4]
local throttles = {}
local i = 6
for _ = 1, tonumber(ARGV[5]) do
  throttles[ARGV[i]] = {limit = tonumber(ARGV[i + 1]), per_worker = ARGV[i + 2] == '1',
                        timeout = tonumber(ARGV[i + 3])}
  i = i + 4
end

-- Drops the slots of queue q taken at or before `cutoff`.
local function drop_expired(q, cutoff)
  local key = P .. 'thr:' .. q
  for _, jid in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', fmt_int(cutoff))) do
    release_slot(jid, q)
  end
end

local function full(q, t)
  drop_expired(q, now - t.timeout)
  local held
  if t.per_worker then
    held = redis.call('ZCARD', P .. 'thrw:' .. q .. '|' .. wid)
  else
    held = redis.call('ZCARD', P .. 'thr:' .. q)
  end
  return held >= t.limit
end

for j = i, #ARGV do
  local q = ARGV[j]
  local t = throttles[q]
  if redis.call('SISMEMBER', P .. 'paused', q) == 0 and redis.call('LLEN', P .. 'q:' .. q) > 0 and
     not (t and full(q, t)) then
    local reserved = reserve_head(q, now, ARGV[3])
    if reserved then
      local jid = reserved[1]
      if t then
        redis.call('ZADD', P .. 'thr:' .. q, fmt_int(now), jid)
        if t.per_worker then
          redis.call('HSET', P .. 'thrwid:' .. q, jid, wid)
          redis.call('ZADD', P .. 'thrw:' .. q .. '|' .. wid, fmt_int(now), jid)
        end
      end
      tstate(jid, 'working', false, ARGV[2])
      if wid ~= '' then record_holder(jid, wid) end
      return reserved
    end
  end
end
return false
