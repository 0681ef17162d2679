-- MUTATE clear: deletes up to `limit` jobs of a sorted set. ARGV: P, set, limit. Returns how many
-- (the C++ side repeats until 0).
local set = P .. ARGV[2]
local jids = redis.call('ZRANGE', set, 0, tonumber(ARGV[3]) - 1)
local n = 0
for _, jid in ipairs(jids) do
  if jid ~= LARGE then  -- no job (prelude: keep_large); it sorts last (+inf)
    redis.call('ZREM', set, jid)
    redis.call('HDEL', JOBS, jid)
    n = n + 1
  end
end
return n
