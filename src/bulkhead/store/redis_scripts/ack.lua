-- uses: batch_lib track_lib
-- ACK, one or more (the ACKs of one turn of the caller's loop, in order). ARGV: P, day, node, then
-- per ACK: jid, now (µs), and, when `node` handed the job out, the reservation's expiry (µs) and
-- queue as its FETCH answered them (else two ''). For each: ends the reservation, releases the
-- job's unique lock and counts one processed job in the same step.
-- Returns one element per ACK: 1 when it ended the reservation given (the job is not read: the
-- node has its header), {header, score} of another job that was reserved, or false.
-- Batches, tracking and unique locks are looked at only when their keys exist (an ACK creates
-- none of them), throttle slots once per queue. Every live unique lock is in unique_locks (a lock
-- that left it by running out is not held any more; its keys expire by themselves).
--
-- Without batches, tracking or unique locks, the ACKs are answered as if each ran alone, in order,
-- with one HMGET for the values that must be read and one ZREM, HDEL, SREM for all the removals
-- (README, "One call for many jobs"); with them, each runs alone as their records are written job
-- by job.
local day, acker = ARGV[2], ARGV[3]
local batches = redis.call('EXISTS', P .. 'batch_members', P .. 'batch_cbs') > 0
local tracked = redis.call('EXISTS', P .. 'track_expiry') == 1
local uniques = redis.call('EXISTS', P .. 'unique_locks') == 1
local out, acked = {}, 0

local function slotless(queue)
  if SLOTLESS[queue] == nil then
    SLOTLESS[queue] = redis.call('EXISTS', P .. 'thr:' .. queue) == 0
  end
end

if batches or tracked or uniques then
  for i = 4, #ARGV, 4 do
    local jid, now = ARGV[i], ARGV[i + 1]
    local v = redis.call('HGET', JOBS, jid)
    local h = v and parse_header(v)
    if not h or h.state ~= 4 then
      out[#out + 1] = false
    else
      local score = redis.call('ZSCORE', P .. 'working', jid)
      slotless(h.queue)
      unlink(jid, h)
      redis.call('HDEL', JOBS, jid)
      if uniques then release_unique(jid) end
      acked = acked + 1
      if batches then bjob_ended(jid, true, now) end
      if tracked then tstate(jid, 'success', false, now) end
      out[#out + 1] = {h.header, score}
    end
  end
  count('processed', acked, day)
  return out
end

-- A reservation is its jid and its expiry: an ACK that names the expiry `working` holds for its
-- jid ends the reservation `acker` handed out, of the queue given, without reading the job. The
-- others read their job's header (one HMGET for all), as do reservations extended since.
local jids, scores, named, unread = {}, {}, {}, {}
for i = 4, #ARGV, 4 do
  local k = #jids + 1
  local jid, expiry = ARGV[i], ARGV[i + 2]
  jids[k] = jid
  -- nil: not reserved (a job is in state 4 exactly while it is in working)
  local score = redis.call('ZSCORE', P .. 'working', jid)
  scores[k] = score
  -- The same digits in practice (an integer below 2^53); compared as numbers when Redis writes
  -- the score otherwise.
  if score and expiry ~= '' and (score == expiry or tonumber(score) == tonumber(expiry)) then
    named[k] = ARGV[i + 3]
  elseif score then
    unread[#unread + 1] = jid
  end
end
local values = {}
for k, v in ipairs(call_many('HMGET', JOBS, unread)) do values[unread[k]] = v end
local ended, gone, by_node = {}, {}, {}
local function ends(jid, queue, node)
  ended[jid] = true
  gone[#gone + 1] = jid
  slotless(queue)
  release_slot(jid, queue, node)
  if node ~= '' then
    by_node[node] = by_node[node] or {}
    table.insert(by_node[node], jid)
  end
end
for k, jid in ipairs(jids) do
  if not scores[k] or ended[jid] then
    out[k] = false  -- not reserved (or acked earlier in this call)
  elseif named[k] then
    ends(jid, named[k], acker)
    out[k] = 1
  else
    local header, reserved, node, queue
    if values[jid] then header, reserved, node, queue = header_of(values[jid]) end
    if reserved then
      ends(jid, queue, node)
      out[k] = {header, scores[k]}
    else
      out[k] = false
    end
  end
end
if #gone > 0 then
  end_reservations(gone, by_node)  -- unlink's step for a reserved job, for all of them at once
  call_many('HDEL', JOBS, gone)
end
count('processed', #gone, day)
return out
