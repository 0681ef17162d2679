-- Adding jobs (PUSH), shared by push.lua and push_marked.lua.

-- Adds the jobs jids[k] (value values[k], score scores[k]) for which add[k] is true, through
-- `node`, with one HSET for all the values and one LPUSH per queue for the queued jobs; the other
-- states' jobs go where their header says, one by one (a PUSH of a scheduled job). Each queue that
-- got jobs is woken once with their number, unless `node` is the only registered node (no other
-- node listens).
local function add_jobs(node, jids, values, scores, add)
  local pairs_, queued, order = {}, {}, {}
  for k, jid in ipairs(jids) do
    if add[k] then
      local v = values[k]
      pairs_[#pairs_ + 1] = jid
      pairs_[#pairs_ + 1] = v
      if string.byte(v, 1) == 48 then  -- state 0: queued
        local q = queue_of(v)
        if not queued[q] then
          queued[q] = {}
          order[#order + 1] = q
        end
        table.insert(queued[q], jid)
      end
    end
  end
  call_many('HSET', JOBS, pairs_, 2)
  for k, jid in ipairs(jids) do
    local v = values[k]
    if add[k] and string.byte(v, 1) ~= 48 then link(jid, parse_header(v), scores[k]) end
  end
  for _, q in ipairs(order) do
    register_queue(q)
    call_many('LPUSH', P .. 'q:' .. q, queued[q])
  end
  if #order > 0 and redis.call('SCARD', P .. 'nodes') > 1 then
    for _, q in ipairs(order) do wake(node, q, #queued[q]) end
  end
end
