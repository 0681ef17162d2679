-- PUSH of one or more jobs (the pushes of one turn of the caller's loop, in order). ARGV: P, node,
-- then per job: jid, value, score (scheduled: due time). Returns one integer per job: 1, or 0
-- when its jid is held. Each queue that got jobs is woken once with their number, unless `node`
-- is the only registered node (no other node listens).
local node = ARGV[2]
local res, woken = {}, {}
for i = 3, #ARGV, 3 do
  local jid, v = ARGV[i], ARGV[i + 1]
  if redis.call('HSETNX', JOBS, jid, v) == 0 then
    res[#res + 1] = 0
  else
    local h = parse_header(v)
    link(jid, h, ARGV[i + 2])
    if h.state == 0 then woken[h.queue] = (woken[h.queue] or 0) + 1 end
    res[#res + 1] = 1
  end
end
if next(woken) and redis.call('SCARD', P .. 'nodes') > 1 then
  for q, n in pairs(woken) do wake(node, q, n) end
end
return res
