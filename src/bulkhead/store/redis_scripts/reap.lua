-- The liveness reaper. ARGV: P, node, now_us, mode.
-- mode 'others': every registered node other than `node` whose alive key is missing is reaped.
-- mode 'stop': `node` stops gracefully and hands its reservations over to their expiry (as a
-- Faktory restart does): its reservation set is deleted, it leaves {NS}:nodes and its alive key is
-- deleted, in one step, so that no reaper gives its reservations back; they stay in working until
-- an ACK or FAIL through any node, or their expiry. Returns {node, reservations handed over}.
-- Reaping NODE gives back every job of {NS}:reserved:NODE: to the oldest end of its queue (RPUSH;
-- the earliest reserved goes out first), state queued, its retry count untouched, ENQUEUED_US
-- '+' now; then the set is deleted, NODE leaves {NS}:nodes, and each queue that got jobs is woken
-- with NODE as the sender (so that every live node, this one included, hears it).
-- Returns {node, given_back, ...}, one pair per reaped node.
local self, now, mode = ARGV[2], ARGV[3], ARGV[4]

local function reap(node)
  local set = P .. 'reserved:' .. node
  local held = {}
  for _, jid in ipairs(redis.call('SMEMBERS', set)) do
    local v = redis.call('HGET', JOBS, jid)
    if v then
      local h = parse(v)
      if h.state == 4 and h.node == node then
        held[#held + 1] = {jid = jid, h = h,
                           score = tonumber(redis.call('ZSCORE', P .. 'working', jid) or '0')}
      end
    end
  end
  -- Latest reservation first: RPUSH leaves the earliest at the very end, fetched first.
  table.sort(held, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.jid > b.jid
  end)
  local woken = {}
  for _, r in ipairs(held) do
    local h = r.h
    redis.call('ZREM', P .. 'working', r.jid)
    h.state = 0
    h.node = ''
    h.enq = '+' .. now
    redis.call('HSET', JOBS, r.jid, build(h))
    redis.call('SADD', P .. 'queues', h.queue)
    redis.call('RPUSH', P .. 'q:' .. h.queue, r.jid)
    woken[h.queue] = (woken[h.queue] or 0) + 1
  end
  redis.call('DEL', set)
  redis.call('SREM', P .. 'nodes', node)
  for q, n in pairs(woken) do wake(node, q, n) end
  return #held
end

local out = {}
if mode == 'stop' then
  local set = P .. 'reserved:' .. self
  out[1] = self
  out[2] = redis.call('SCARD', set)
  redis.call('DEL', set, P .. 'alive:' .. self)
  redis.call('SREM', P .. 'nodes', self)
  return out
end
for _, node in ipairs(redis.call('SMEMBERS', P .. 'nodes')) do
  if node ~= self and redis.call('EXISTS', P .. 'alive:' .. node) == 0 then
    out[#out + 1] = node
    out[#out + 1] = reap(node)
  end
end
return out
