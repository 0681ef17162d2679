-- Moves up to `limit` due jobs of a sorted set onto their queues. ARGV: P, set ('scheduled' or
-- 'retry'), now_us, limit, node. Returns {jid, header, ...} of the jobs moved (no payloads).
local set = P .. ARGV[2]
local due = redis.call('ZRANGEBYSCORE', set, '-inf', ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
local out, woken = {}, {}
for _, jid in ipairs(due) do
  redis.call('ZREM', set, jid)
  local v = redis.call('HGET', JOBS, jid)
  if v then
    local h = parse(v)
    h.state = 0
    h.enq = '+' .. ARGV[3]
    local nv = build(h)
    redis.call('HSET', JOBS, jid, nv)
    link(jid, h)
    out[#out + 1] = jid
    out[#out + 1] = string.sub(nv, 1, #nv - #h.tail)
    woken[h.queue] = (woken[h.queue] or 0) + 1
  end
end
for q, n in pairs(woken) do wake(ARGV[5], q, n) end
return out
