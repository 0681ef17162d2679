-- Takes up to ARGV[1] jobs from Sidekiq queues into this node's in-progress list, in one step.
-- KEYS[1]: bulkhead:bridge:taking:NODE. ARGV[2..]: the queue names, in priority order.
-- Each job moves, oldest first, from the right end of queue:NAME (where Sidekiq's fetch takes it:
-- BRPOP; Sidekiq::Client pushes with LPUSH) to the left end of the list (RPOPLPUSH: Redis 1.2 on;
-- LMOVE RIGHT LEFT from 6.2 is the same step). The first queue's jobs come first, as Sidekiq's
-- strict order. Returns the jobs in the order taken.
local max, out = tonumber(ARGV[1]), {}
for i = 2, #ARGV do
  local q = 'queue:' .. ARGV[i]
  while #out < max do
    local job = redis.call('RPOPLPUSH', q, KEYS[1])
    if not job then break end
    out[#out + 1] = job
  end
  if #out >= max then break end
end
return out
