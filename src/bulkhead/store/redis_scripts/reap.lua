-- The liveness reaper. ARGV: P, node, now_us, mode, queue... (or jid... for 'lost')
-- mode 'others': every registered node other than `node` whose alive key is missing is reaped:
-- all its reservations are given back. Returns {node, given back, ...}, one pair per reaped node.
-- mode 'stop': `node` stops gracefully: its reservations of the listed queues (those only this
-- node could end: its own delivery engine's) are given back; the others are handed over to their
-- expiry, as across a Faktory restart (they stay in working until an ACK or FAIL through any node,
-- or their expiry). Its alive key, reservation set and roster are deleted and it leaves {NS}:nodes
-- in the same step, so no reaper touches what it handed over. Returns {node, given back, handed over}.
-- mode 'lost': `node`'s connection came back after a loss; the listed jids are reservations
-- of `node` that none of its callers knows of (their FETCH reply was lost with the connection):
-- each still reserved by `node` is given back, its queue woken with the sender 'reclaim:NODE' (so
-- that `node` itself hears it too: its own FETCHes may wait on that queue). Returns how many were.
-- Giving back a job: to the oldest end of its queue (RPUSH; the earliest reserved goes out first),
-- state queued, NODE cleared, its payload (retry count) untouched, ENQUEUED_US '+' now; each
-- queue that got jobs is woken with NODE as the sender (so every live node, this one included,
-- hears it).
local self, now, mode = ARGV[2], ARGV[3], ARGV[4]

-- The reservations of `node` among `jids` that are still its own (state working, NODE node),
-- as {jid, h, score}; `only` (a set of queues, or nil for all) limits them, the rest are counted
-- as kept.
local function held_by(node, jids, only)
  local held, kept = {}, 0
  for _, jid in ipairs(jids) do
    local v = redis.call('HGET', JOBS, jid)
    if v then
      local h = parse(v)
      if h.state == 4 and h.node == node then
        if only and not only[h.queue] then
          kept = kept + 1
        else
          held[#held + 1] = {jid = jid, h = h,
                             score = tonumber(redis.call('ZSCORE', P .. 'working', jid) or '0')}
        end
      end
    end
  end
  return held, kept
end

-- Gives back `held` (from held_by) and wakes their queues as `sender`.
local function give_back(node, held, sender)
  -- Latest reservation first: RPUSH leaves the earliest at the very end, fetched first.
  table.sort(held, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    return a.jid > b.jid
  end)
  local woken = {}
  for _, r in ipairs(held) do
    local h = r.h
    unlink(r.jid, h)  -- h.node is `node` (held_by)
    h.state = 0
    h.node = ''
    h.enq = '+' .. now
    redis.call('HSET', JOBS, r.jid, build(h))
    register_queue(h.queue)
    redis.call('RPUSH', P .. 'q:' .. h.queue, r.jid)
    woken[h.queue] = (woken[h.queue] or 0) + 1
  end
  for q, n in pairs(woken) do wake(sender, q, n) end
end

-- Gives back NODE's reservations (of the queues in `only`, or all when nil), deletes its set and
-- unregisters it. Returns how many were given back and how many were left reserved.
local function reap(node, only)
  local set = P .. 'reserved:' .. node
  local held, kept = held_by(node, redis.call('SMEMBERS', set), only)
  give_back(node, held, node)
  redis.call('DEL', set, P .. 'roster:' .. node)
  redis.call('SREM', P .. 'nodes', node)
  return #held, kept
end

if mode == 'stop' then
  local only = {}
  for i = 5, #ARGV do only[ARGV[i]] = true end
  redis.call('DEL', P .. 'alive:' .. self)
  local given, kept = reap(self, only)
  return {self, given, kept}
end
if mode == 'lost' then
  local jids = {}
  for i = 5, #ARGV do
    if redis.call('SISMEMBER', P .. 'reserved:' .. self, ARGV[i]) == 1 then
      jids[#jids + 1] = ARGV[i]
    end
  end
  local held = held_by(self, jids, nil)
  give_back(self, held, 'reclaim:' .. self)
  return #held
end
local out = {}
for _, node in ipairs(redis.call('SMEMBERS', P .. 'nodes')) do
  if node ~= self and redis.call('EXISTS', P .. 'alive:' .. node) == 0 then
    out[#out + 1] = node
    out[#out + 1] = (reap(node))
  end
end
return out
