-- PUSH of one or more jobs (the pushes of one turn of the caller's loop, in order). ARGV: P, node,
-- then per job: jid, value, score (scheduled: due time). Returns one integer per job: 1, or 0
-- when its jid is held (by an earlier job of the same call too). Each queue that got jobs is
-- woken once with their number, unless `node` is the only registered node (no other node listens).
--
-- As if each ran alone, in order, with one HMGET for all the jids, one HSET for all the values and
-- one LPUSH per queue for the queued jobs (README, "One call for many jobs").
local node = ARGV[2]
local jids = {}
for i = 3, #ARGV, 3 do jids[#jids + 1] = ARGV[i] end
local held = call_many('HMGET', JOBS, jids)
local res, values, queued, order, seen = {}, {}, {}, {}, {}
for k, jid in ipairs(jids) do
  local v = ARGV[k * 3 + 1]
  if held[k] or seen[jid] then
    res[k] = 0
  else
    seen[jid] = true
    values[#values + 1] = jid
    values[#values + 1] = v
    if string.byte(v, 1) == 48 then  -- state 0: queued
      local q = queue_of(v)
      if not queued[q] then
        queued[q] = {}
        order[#order + 1] = q
      end
      table.insert(queued[q], jid)
    end
    res[k] = 1
  end
end
call_many('HSET', JOBS, values, 2)
for k, jid in ipairs(jids) do
  local v = ARGV[k * 3 + 1]
  -- The other states' jobs go where their header says, one by one (a PUSH of a scheduled job).
  if res[k] == 1 and string.byte(v, 1) ~= 48 then link(jid, parse_header(v), ARGV[k * 3 + 2]) end
end
for _, q in ipairs(order) do
  register_queue(q)
  call_many('LPUSH', P .. 'q:' .. q, queued[q])
end
if #order > 0 and redis.call('SCARD', P .. 'nodes') > 1 then
  for _, q in ipairs(order) do wake(node, q, #queued[q]) end
end
return res
