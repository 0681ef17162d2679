-- uses: push_lib
-- PUSH of one or more jobs (the pushes of one turn of the caller's loop, in order). ARGV: P, node,
-- then per job: jid, value, score (scheduled: due time). Returns one integer per job: 1, or 0
-- when its jid is held (by an earlier job of the same call too). Each queue that got jobs is
-- woken once with their number, unless `node` is the only registered node (no other node listens).
--
-- As if each ran alone, in order, with one HMGET for all the jids, one HSET for all the values and
-- one LPUSH per queue for the queued jobs (README, "One call for many jobs").
local node = ARGV[2]
local jids, values, scores = {}, {}, {}
for i = 3, #ARGV, 3 do
  jids[#jids + 1] = ARGV[i]
  values[#values + 1] = ARGV[i + 1]
  scores[#scores + 1] = ARGV[i + 2]
end
local held = call_many('HMGET', JOBS, jids)
local res, add, seen = {}, {}, {}
for k, jid in ipairs(jids) do
  add[k] = not held[k] and not seen[jid]
  seen[jid] = true
  res[k] = add[k] and 1 or 0
end
add_jobs(node, jids, values, scores, add)
return res
