-- Batches: the rules of store/batch_record.h, as store/batch_book.cc applies them for the
-- embedded stores. Prepended (after the prelude) to every script whose first line names it
-- (`-- uses: batch_lib`: ack, fail_reserved, the batch_* scripts), so that a member's ACK or FAIL,
-- its batch's counts and the callback's push are one step.
local BATCH_RETENTION_US = 86400000000
local MEMBERS = P .. 'batch_members'
local CALLBACKS = P .. 'batch_cbs'

local function bkey(bid) return P .. 'batch:' .. bid end

-- The key of batch bid when it exists and has not expired at now, else nil.
local function blive(bid, now)
  local k = bkey(bid)
  local exp = redis.call('HGET', k, 'expires')
  if not exp then return nil end
  if tonumber(exp) ~= 0 and tonumber(exp) <= tonumber(now) then return nil end
  return k
end

local function bnum(k, f) return tonumber(redis.call('HGET', k, f) or '0') end
local function bstr(k, f) return redis.call('HGET', k, f) or '' end

local function bexpire_at(bid, k, exp)
  redis.call('HSET', k, 'expires', fmt_int(exp))
  if exp == 0 then
    redis.call('ZREM', P .. 'batch_expiry', bid)
  else
    redis.call('ZADD', P .. 'batch_expiry', fmt_int(exp), bid)
  end
end

local function bcount(name) redis.call('HINCRBY', P .. 'stats', 'batch:' .. name, 1) end

local function split_tab(s)
  local tab = string.find(s, '\t', 1, true)
  return string.sub(s, 1, tab - 1), string.sub(s, tab + 1)
end

-- Pushes callback `which` of batch bid into the scheduled set, due now.
local function bfire(bid, k, which, now)
  local jid = bstr(k, which .. '_jid')
  redis.call('HSET', k, which .. '_st', '1')
  redis.call('HSET', CALLBACKS, jid, bid .. '\t' .. which)
  if redis.call('HEXISTS', JOBS, jid) == 1 then return end
  redis.call('HSET', JOBS, jid, redis.call('HGET', k, which .. '_v'))
  redis.call('ZADD', P .. 'scheduled', now, jid)
end

-- Fires what is due in batch bid; returns the event to tell its parent ('ran', 'succeeded') or nil.
local function bsettle(bid, k, now)
  if redis.call('HGET', k, 'committed') ~= '1' then return nil end
  local pending = bnum(k, 'pending')
  local all_ran = pending == bnum(k, 'executed')
  local has_c, has_s = bstr(k, 'complete_jid') ~= '', bstr(k, 'success_jid') ~= ''
  if has_c and bstr(k, 'complete_st') == '' and all_ran then bfire(bid, k, 'complete', now) end
  local complete_done = all_ran
  if has_c then complete_done = bstr(k, 'complete_st') == '2' end
  if has_s and bstr(k, 'success_st') == '' and pending == 0 and complete_done then
    bfire(bid, k, 'success', now)
  end
  local success_done = pending == 0 and complete_done
  if has_s then success_done = bstr(k, 'success_st') == '2' end
  local told = bnum(k, 'told')
  if success_done and told < 2 then
    redis.call('HSET', k, 'told', '2')
    bcount('succeeded')
    bexpire_at(bid, k, tonumber(now) + BATCH_RETENTION_US)
    return 'succeeded'
  elseif complete_done and told < 1 then
    redis.call('HSET', k, 'told', '1')
    return 'ran'
  end
  return nil
end

-- Applies event ev ('failed', 'ran', 'succeeded', 'gone') to member key; returns its batch's bid
-- when its counts changed, else nil. Statuses: p not run yet, f last attempt failed, x ran.
local function bmember(key, ev)
  local m = redis.call('HGET', MEMBERS, key)
  if not m then return nil end
  local bid, st = split_tab(m)
  local k = bkey(bid)
  if redis.call('EXISTS', k) == 0 then
    redis.call('HDEL', MEMBERS, key)
    return nil
  end
  if ev == 'failed' then
    if st == 'f' then return nil end
    if st == 'p' then redis.call('HINCRBY', k, 'executed', 1) end
    redis.call('HINCRBY', k, 'failed', 1)
    st = 'f'
  elseif ev == 'ran' then
    if st ~= 'p' then return nil end
    redis.call('HINCRBY', k, 'executed', 1)
    st = 'x'
  else
    redis.call('HINCRBY', k, 'pending', -1)
    if st == 'f' then redis.call('HINCRBY', k, 'failed', -1) end
    if st ~= 'p' then redis.call('HINCRBY', k, 'executed', -1) end
    if ev == 'gone' then redis.call('HINCRBY', k, 'total', -1) end
    redis.call('HDEL', MEMBERS, key)
    return bid
  end
  redis.call('HSET', MEMBERS, key, bid .. '\t' .. st)
  return bid
end

-- Applies ev to member key, settles its batch, and climbs to the parents as far as they change.
local function bapply(key, ev, now)
  while true do
    local bid = bmember(key, ev)
    if not bid then return end
    local k = bkey(bid)
    local up = bsettle(bid, k, now)
    if not up or bstr(k, 'parent') == '' then return end
    key, ev = bid, up
  end
end

-- A reservation of jid ended: acked (true) or failed.
local function bjob_ended(jid, acked, now)
  if redis.call('HEXISTS', MEMBERS, jid) == 1 then
    if acked then bapply(jid, 'succeeded', now) else bapply(jid, 'failed', now) end
    return
  end
  if not acked then return end
  local c = redis.call('HGET', CALLBACKS, jid)
  if not c then return end
  redis.call('HDEL', CALLBACKS, jid)
  local bid, which = split_tab(c)
  local k = blive(bid, now)
  if not k then return end
  redis.call('HSET', k, which .. '_st', '2')
  local up = bsettle(bid, k, now)
  if up and bstr(k, 'parent') ~= '' then bapply(bid, up, now) end
end
