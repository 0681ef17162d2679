-- MUTATE clear: deletes up to `limit` jobs of a sorted set. ARGV: P, set, limit. Returns how many
-- (the C++ side repeats until 0).
local set = P .. ARGV[2]
local jids = redis.call('ZRANGE', set, 0, tonumber(ARGV[3]) - 1)
for _, jid in ipairs(jids) do
  redis.call('ZREM', set, jid)
  redis.call('HDEL', JOBS, jid)
end
return #jids
