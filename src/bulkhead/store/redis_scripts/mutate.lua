-- MUTATE on the listed jids of a sorted set (the C++ side chose them with the filter). ARGV: P, op
-- ('discard', 'kill', 'requeue'), set, now_us, dead_until_us, node, jid... Jobs no longer in the set
-- are skipped. Returns how many were changed.
local op, set, n = ARGV[2], P .. ARGV[3], 0
for i = 7, #ARGV do
  local jid = ARGV[i]
  local v = redis.call('HGET', JOBS, jid)
  if v and redis.call('ZSCORE', set, jid) then
    local h = parse(v)
    if op == 'discard' then
      unlink(jid, h)
      redis.call('HDEL', JOBS, jid)
      n = n + 1
    elseif op == 'kill' then
      if h.state ~= 3 then
        unlink(jid, h)
        h.state = 3
        redis.call('HSET', JOBS, jid, build(h))
        link(jid, h, ARGV[5])
      end
      n = n + 1
    elseif op == 'requeue' then
      unlink(jid, h)
      h.state = 0
      h.enq = '+' .. ARGV[4]
      redis.call('HSET', JOBS, jid, build(h))
      link(jid, h)
      wake(ARGV[6], h.queue)
      n = n + 1
    end
  end
end
return n
