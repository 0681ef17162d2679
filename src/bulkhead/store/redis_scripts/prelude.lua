-- Shared by every script (prepended by the C++ side). ARGV[1] is the key prefix "{NS}:".
local P = ARGV[1]
local JOBS = P .. 'jobs'

local function fmt_int(n)
  return string.format('%d', n)
end

-- Splits a job value into its header fields and the offset where "\n" PAYLOAD starts.
local function parse(v)
  local nl = string.find(v, '\n', 1, true)
  local state, reserve, enq, node, queue, rest =
    string.match(string.sub(v, 1, nl - 1), '^(%d)|(%d+)|(%+?%d+)|([^|]*)|([^|]*)|(.*)$')
  return {state = tonumber(state), reserve = tonumber(reserve), enq = enq, node = node,
          queue = queue, jobtype = rest, tail = string.sub(v, nl)}
end

-- The header fields of a job value and the header itself (h.header), without the payload.
local function parse_header(v)
  local header = string.sub(v, 1, string.find(v, '\n', 1, true) - 1)
  local state, reserve, enq, node, queue, rest =
    string.match(header, '^(%d)|(%d+)|(%+?%d+)|([^|]*)|([^|]*)|(.*)$')
  return {state = tonumber(state), reserve = tonumber(reserve), enq = enq, node = node,
          queue = queue, jobtype = rest, header = header}
end

local function build(h)
  return h.state .. '|' .. h.reserve .. '|' .. h.enq .. '|' .. h.node .. '|' .. h.queue .. '|' ..
         h.jobtype .. h.tail
end

-- The positions of the '|' after RESERVE_FOR, ENQUEUED_US and NODE in a job value (the one after
-- STATE is at 2; QUEUE ends at the next): plain finds, for the steps that run for every job.
local function bars(v)
  local a = string.find(v, '|', 3, true)
  local b = string.find(v, '|', a + 1, true)
  return a, b, string.find(v, '|', b + 1, true)
end

-- The value of a queued job reserved through a node (state 4, NODE set), and its reserve_for in
-- seconds, for FETCH, which runs it for every job: one gsub builds the new value in one buffer,
-- so Lua makes (and hashes) one string of the value's length, not a copy of the payload and
-- then the value. `repl` is reserved_repl(node).
local function reserved_value(v, repl)
  return (string.gsub(v, '^%d(|%d+|%+?%d+|)[^|]*', repl, 1)),
         tonumber(string.sub(v, 3, string.find(v, '|', 3, true) - 1))
end

-- reserved_value's replacement for `node`: STATE 4, RESERVE_FOR and ENQUEUED_US kept, NODE.
local function reserved_repl(node)
  return '4%1' .. string.gsub(node, '%%', '%%%%')
end

-- The QUEUE field of a job value (PUSH runs it for every queued job).
local function queue_of(v)
  local _, _, c = bars(v)
  return string.sub(v, c + 1, string.find(v, '|', c + 1, true) - 1)
end

-- For ACK, of a job value: its header, and whether it is reserved (state 4), its NODE and QUEUE.
local function header_of(v)
  local header = string.sub(v, 1, string.find(v, '\n', 1, true) - 1)
  if string.byte(header, 1) ~= 52 then return header, false end  -- '4'
  local _, b, c = bars(header)
  return header, true, string.sub(header, b + 1, c - 1),
         string.sub(header, c + 1, string.find(header, '|', c + 1, true) - 1)
end

local SETS = {[1] = 'scheduled', [2] = 'retry', [3] = 'dead', [4] = 'working'}

-- Tells every node (subscribed to {NS}:wake) that n jobs (default 1) became available in `queue`
-- through `node`: the message is "NODE N QUEUE".
local function wake(node, queue, n)
  redis.call('PUBLISH', P .. 'wake', node .. ' ' .. (n or 1) .. ' ' .. queue)
end

-- Queue throttling: releases the throttle slot jid holds in `queue`, if any (README,
-- "Queue throttles"). Called whenever a job leaves the working set. With `node` (the node that
-- reserved it), a released slot wakes the other nodes' FETCHes waiting on `queue` (a slot may be
-- all they wait for).
-- A script that knows `queue` holds no throttle slot may set SLOTLESS[queue] (ack.lua does, once
-- per queue per call): release_slot then skips it.
local SLOTLESS = {}
local function release_slot(jid, queue, node)
  if SLOTLESS[queue] then return end
  if redis.call('ZREM', P .. 'thr:' .. queue, jid) == 1 then
    local wid = redis.call('HGET', P .. 'thrwid:' .. queue, jid)
    if wid then
      redis.call('HDEL', P .. 'thrwid:' .. queue, jid)
      redis.call('ZREM', P .. 'thrw:' .. queue .. '|' .. wid, jid)
    end
    if node and node ~= '' then wake(node, queue) end
  end
end

-- What a script call already did once: registered a member of a set ('r' .. SET .. '|' .. MEMBER:
-- register) or kept a key out of the listpack encoding ('b' .. KEY).
local KNOWN = {}

-- LARGE: a member no jid can be (a jid is a JSON string, so valid UTF-8, never byte 255), longer
-- than Redis's listpack limit for one entry (64 bytes). The reservation keys a FETCH and its ACK
-- touch ({NS}:working, {NS}:reserved:NODE, {NS}:wid) keep it as long as they exist: a key with
-- such a member is a skip list, hash table or set hash table, never a listpack, where with up to
-- 128 entries (a usual number of jobs in flight) every ZADD, ZSCORE, ZREM, HSET, HDEL walks the
-- whole key (3-4 µs each instead of about 1; docs/benchmarks.md). Readers never meet it as a job:
-- it has no entry in JOBS (README, "Key layout").
local LARGE = '\255' .. string.rep('-', 72)

-- Adds LARGE to `key` (kind 'z' sorted set, with score +inf; 'h' hash; 's' set), once per call.
local function keep_large(kind, key)
  if KNOWN['b' .. key] then return end
  KNOWN['b' .. key] = true
  if kind == 'z' then
    redis.call('ZADD', key, 'NX', '+inf', LARGE)
  elseif kind == 'h' then
    redis.call('HSETNX', key, LARGE, '')
  else
    redis.call('SADD', key, LARGE)
  end
end

-- Adds `member` to the set {NS}:SET (a queue to `queues`, a node to `nodes`), once per script
-- call.
local function register(set, member)
  local known = 'r' .. set .. '|' .. member
  if not KNOWN[known] then
    redis.call('SADD', P .. set, member)
    KNOWN[known] = true
  end
end

-- redis.call(cmd, key, items...) for a list of any length, in calls of at most 512 items (Lua's
-- unpack has a stack limit); `step` (default 1) keeps pairs together. Returns the replies of the
-- calls appended in order when they are arrays (HMGET), else nothing. No call for no items.
local function call_many(cmd, key, items, step)
  local out = {}
  local per = 512 - 512 % (step or 1)
  for first = 1, #items, per do
    local r = redis.call(cmd, key, unpack(items, first, math.min(#items, first + per - 1)))
    if type(r) == 'table' then
      for _, e in ipairs(r) do out[#out + 1] = e end
    end
  end
  return out
end

-- Records the workers holding reservations (README, "Reservation holders"): jid_wids is
-- {jid, wid, ...}.
local function record_holders(jid_wids)
  keep_large('h', P .. 'wid')
  call_many('HSET', P .. 'wid', jid_wids, 2)
end

local function record_holder(jid, wid)
  record_holders({jid, wid})
end

-- Reservations made through `node`: score_jids {score, jid, ...} into the working set, `jids`
-- into NODE's reservation set. Registers the node once per call: a node reaped while it was only
-- slow registers again with its first new reservation.
local function add_reservations(score_jids, jids, node)
  keep_large('z', P .. 'working')
  call_many('ZADD', P .. 'working', score_jids, 2)
  if node == '' then return end
  keep_large('s', P .. 'reserved:' .. node)
  call_many('SADD', P .. 'reserved:' .. node, jids)
  register('nodes', node)
end

-- Ends reservations (the jobs' values stay in JOBS): `jids` leave the working set and the holders,
-- by_node[NODE] leave NODE's reservation set. Throttle slots are the caller's (release_slot).
local function end_reservations(jids, by_node)
  call_many('ZREM', P .. 'working', jids)
  call_many('HDEL', P .. 'wid', jids)  -- their holders (README)
  for node, list in pairs(by_node) do call_many('SREM', P .. 'reserved:' .. node, list) end
end

-- Registers `queue` in {NS}:queues, once per script call.
local function register_queue(queue)
  register('queues', queue)
end

-- Takes jid out of wherever its header says it is (its value stays in JOBS).
local function unlink(jid, h)
  if h.state == 0 then
    redis.call('LREM', P .. 'q:' .. h.queue, 1, jid)
  elseif h.state == 4 then
    release_slot(jid, h.queue, h.node)
    end_reservations({jid}, h.node ~= '' and {[h.node] = {jid}} or {})
  else
    redis.call('ZREM', P .. SETS[h.state], jid)
  end
end

-- Puts jid (header h, already written) where h says: its queue (newest end) or a sorted set.
-- Registers a queue, and a node, once per script call (KNOWN).
local function link(jid, h, score)
  if h.state == 0 then
    register_queue(h.queue)
    redis.call('LPUSH', P .. 'q:' .. h.queue, jid)
  elseif h.state == 4 then
    add_reservations({score, jid}, {jid}, h.node)
  else
    redis.call('ZADD', P .. SETS[h.state], score, jid)
  end
end

-- Reserves the oldest job of queue `q` through `node` until now_us + its reserve_for (FETCH):
-- {jid, value, score}, or nil when the queue is empty. The value as the batched FETCH writes it
-- (reserved_value).
local function reserve_head(q, now_us, node)
  while true do
    local jid = redis.call('RPOP', P .. 'q:' .. q)
    if not jid then return nil end
    local v = redis.call('HGET', JOBS, jid)
    if v then
      local nv, reserve = reserved_value(v, reserved_repl(node))
      local score = fmt_int(now_us + reserve * 1000000)
      redis.call('HSET', JOBS, jid, nv)
      add_reservations({score, jid}, {jid}, node)
      return {jid, nv, score}
    end
    -- A listed jid without a job (these scripts never leave one): dropped.
  end
end

-- Adds delta to counter `name`, in all and for `day` (YYYY-MM-DD).
local function count(name, delta, day)
  if tonumber(delta) ~= 0 then
    redis.call('HINCRBY', P .. 'stats', name, delta)
    redis.call('HINCRBY', P .. 'stats', name .. ':' .. day, delta)
  end
end

-- Unique jobs: {NS}:unique:KEY = "JID|UNTIL_US" (the holder and the lock's expiry on the
-- pushing node's clock), with {NS}:unique_jid:JID = KEY beside it; both keys also expire (PX).
-- The holder of `value`, or nil when `value` is nil or expired at now_us.
local function unique_holder(value, now_us)
  if not value then return nil end
  local jid, until_us = string.match(value, '^(.*)|(%d+)$')
  if not jid or tonumber(until_us) <= tonumber(now_us) then return nil end
  return jid
end

-- Releases the lock `jid` holds, if any.
local function release_unique(jid)
  local key = redis.call('GET', P .. 'unique_jid:' .. jid)
  if not key then return end
  local value = redis.call('GET', P .. 'unique:' .. key)
  if value and string.match(value, '^(.*)|') == jid then
    redis.call('DEL', P .. 'unique:' .. key)
    redis.call('ZREM', P .. 'unique_locks', key)
  end
  redis.call('DEL', P .. 'unique_jid:' .. jid)
end
