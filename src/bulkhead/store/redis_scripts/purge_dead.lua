-- Deletes up to `limit` dead jobs past their purge time. ARGV: P, now_us, limit. Returns how many.
local due = redis.call('ZRANGEBYSCORE', P .. 'dead', '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, jid in ipairs(due) do
  redis.call('ZREM', P .. 'dead', jid)
  redis.call('HDEL', JOBS, jid)
end
return #due
