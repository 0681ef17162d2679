-- Records the workers holding reservations (#14; README, "Reservation holders"), one or more (the
-- calls of one turn of the caller's loop, coalesced as fetch.lua's are). ARGV: P, node (unused),
-- then per call: jid, wid. Only while `jid` is in the working set; unlink, reap and flush drop the
-- entry when the job leaves it. Returns one element per call: 1, or 0 (no change) when jid is not
-- reserved.
local out = {}
for i = 3, #ARGV, 2 do
  local jid = ARGV[i]
  if redis.call('ZSCORE', P .. 'working', jid) then
    redis.call('HSET', P .. 'wid', jid, ARGV[i + 1])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
