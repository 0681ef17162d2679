-- uses: batch_lib track_lib
-- Deletes tracking records past their 30 minutes. ARGV: P, now, limit. Returns how many.
local due = redis.call('ZRANGEBYSCORE', P .. 'track_expiry', '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])
for _, jid in ipairs(due) do
  redis.call('DEL', P .. 'track:' .. jid)
  redis.call('ZREM', P .. 'track_expiry', jid)
end
return #due
