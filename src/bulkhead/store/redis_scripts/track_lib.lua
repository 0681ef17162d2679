-- Job tracking: the rules of store/track_record.h, as store/track_book.cc applies them for
-- the embedded stores. Prepended (after the prelude) to every script whose first line names it
-- (`-- uses: track_lib`: fetch, ack, fail_reserved, track_*), so that a followed job's state
-- changes in the same step as the job.
-- {NS}:track:JID is a hash: state ('' while not followed), percent, desc, updated (µs); the
-- sorted set {NS}:track_expiry holds JID with score updated + 30 minutes.
local TRACK_TTL_US = 1800000000

-- The key of jid's record when it exists and has not expired at now, else nil.
local function tlive(jid, now)
  local k = P .. 'track:' .. jid
  local updated = redis.call('HGET', k, 'updated')
  if not updated or tonumber(updated) + TRACK_TTL_US <= tonumber(now) then return nil end
  return k
end

local function ttouch(jid, k, now)
  redis.call('HSET', k, 'updated', now)
  redis.call('ZADD', P .. 'track_expiry', fmt_int(tonumber(now) + TRACK_TTL_US), jid)
end

-- A followed job's state changes; start (PUSH of a tracked job) starts following it.
local function tstate(jid, state, start, now)
  local k = tlive(jid, now)
  if not k then
    if not start then return end
    k = P .. 'track:' .. jid
    redis.call('DEL', k)
  elseif not start and (redis.call('HGET', k, 'state') or '') == '' then
    return
  end
  redis.call('HSET', k, 'state', state)
  ttouch(jid, k, now)
end
