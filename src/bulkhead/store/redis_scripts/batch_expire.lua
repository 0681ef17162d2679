-- uses: batch_lib track_lib
-- Deletes batches whose expiry passed. ARGV: P, now, limit. Returns how many.
local now = ARGV[2]
local due = redis.call('ZRANGEBYSCORE', P .. 'batch_expiry', '-inf', now, 'LIMIT', 0, ARGV[3])
for _, bid in ipairs(due) do
  local k = bkey(bid)
  local uncommitted = redis.call('HGET', k, 'committed') ~= '1'
  local parent = bstr(k, 'parent')
  redis.call('DEL', k)
  redis.call('ZREM', P .. 'batch_expiry', bid)
  redis.call('SREM', P .. 'batches', bid)
  if uncommitted then
    bcount('expired')
    -- A child that expired uncommitted never was: its parent stops waiting for it.
    if parent ~= '' then bapply(bid, 'gone', now) end
  end
end
return #due
