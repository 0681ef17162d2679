-- Takes up to ARGV[1] jobs, and no more once ARGV[2] bytes are taken (at least one job), from
-- Sidekiq queues into this node's in-progress list, in one step.
-- KEYS[1]: bulkhead:bridge:taking:NODE. ARGV[3..]: the queue names, in priority order.
-- Each job moves, oldest first, from the right end of queue:NAME (where Sidekiq's fetch takes it:
-- BRPOP; Sidekiq::Client pushes with LPUSH) to the left end of the list (RPOPLPUSH: Redis 1.2 on;
-- LMOVE RIGHT LEFT from 6.2 is the same step). The first queue's jobs come first, as Sidekiq's
-- strict order. Returns the jobs in the order taken.
local max, max_bytes, out, bytes = tonumber(ARGV[1]), tonumber(ARGV[2]), {}, 0
for i = 3, #ARGV do
  local q = 'queue:' .. ARGV[i]
  while #out < max and bytes < max_bytes do
    local job = redis.call('RPOPLPUSH', q, KEYS[1])
    if not job then break end
    out[#out + 1] = job
    bytes = bytes + #job
  end
  if #out >= max or bytes >= max_bytes then break end
end
return out
