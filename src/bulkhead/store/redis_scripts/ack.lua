-- ACK, one or more (the ACKs of one turn of the caller's loop, in order). ARGV: P, day, then per
-- ACK: jid, now (µs). For each: ends the reservation, releases the job's unique lock (#13) and
-- counts one processed job in the same step.
-- Returns one element per ACK: {header, score} of the job that was reserved, or false.
-- Batches, tracking and unique locks are looked at only when their keys exist (an ACK creates
-- none of them), throttle slots once per queue. Every live unique lock is in unique_locks (a lock
-- that left it by running out is not held any more; its keys expire by themselves).
--
-- Without batches, tracking or unique locks, the ACKs are answered as if each ran alone, in order,
-- with one HMGET for all the values and one ZREM, HDEL, SREM for all the removals (README, "One
-- call for many jobs"); with them, each runs alone as their records are written job by job.
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
  for i = 3, #ARGV, 2 do
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
  count('processed', acked, ARGV[2])
  return out
end

local jids = {}
for i = 3, #ARGV, 2 do jids[#jids + 1] = ARGV[i] end
local values = call_many('HMGET', JOBS, jids)
local ended, gone, by_node = {}, {}, {}
for k, jid in ipairs(jids) do
  local v = values[k]
  local header, reserved, node, queue
  if v and not ended[jid] then header, reserved, node, queue = header_of(v) end
  if not reserved then
    out[k] = false  -- not reserved (or acked earlier in this call)
  else
    ended[jid] = true
    gone[#gone + 1] = jid
    out[k] = {header, redis.call('ZSCORE', P .. 'working', jid)}
    slotless(queue)
    release_slot(jid, queue, node)
    if node ~= '' then
      by_node[node] = by_node[node] or {}
      table.insert(by_node[node], jid)
    end
  end
end
if #gone > 0 then
  end_reservations(gone, by_node)  -- unlink's step for a reserved job, for all of them at once
  call_many('HDEL', JOBS, gone)
end
count('processed', #gone, ARGV[2])
return out
