-- FETCH. ARGV: P, now_us, node, queue... Reserves the oldest job of the first non-empty, unpaused
-- queue until now + its reserve_for, through `node`. Returns {jid, value, score} or false.
local now = tonumber(ARGV[2])
for i = 4, #ARGV do
  local q = ARGV[i]
  if redis.call('SISMEMBER', P .. 'paused', q) == 0 then
    local reserved = reserve_head(q, now, ARGV[3])
    if reserved then
      tstate(reserved[1], 'working', false, ARGV[2])
      return reserved
    end
  end
end
return false
