-- FETCH. ARGV: P, now_us, node, queue... Reserves the oldest job of the first non-empty, unpaused
-- queue until now + its reserve_for, through `node`. Returns {jid, value, score} or false.
local now = tonumber(ARGV[2])
for i = 4, #ARGV do
  local q = ARGV[i]
  if redis.call('SISMEMBER', P .. 'paused', q) == 0 then
    while true do
      local jid = redis.call('RPOP', P .. 'q:' .. q)
      if not jid then break end
      local v = redis.call('HGET', JOBS, jid)
      if v then
        local h = parse(v)
        h.state = 4
        h.node = ARGV[3]
        local score = fmt_int(now + h.reserve * 1000000)
        local nv = build(h)
        redis.call('HSET', JOBS, jid, nv)
        link(jid, h, score)
        tstate(jid, 'working', false, ARGV[2])
        return {jid, nv, score}
      end
      -- A listed jid without a job (these scripts never leave one): dropped.
    end
  end
end
return false
