-- Reserved jobs with a holder (README, "Reservation holders"). ARGV: P, limit. Returns
-- {jid, wid, value, score, ...}, at most `limit` jobs; an entry whose job is no longer reserved
-- (left by a node of an older build, which does not drop entries) is skipped and deleted.
local limit = tonumber(ARGV[2])
local held = redis.call('HGETALL', P .. 'wid')
local out, n = {}, 0
for i = 1, #held, 2 do
  if n >= limit then break end
  local jid = held[i]
  if jid ~= LARGE then  -- LARGE is no reservation (prelude: keep_large)
    local score = redis.call('ZSCORE', P .. 'working', jid)
    local v = score and redis.call('HGET', JOBS, jid)
    if v then
      out[#out + 1] = jid
      out[#out + 1] = held[i + 1]
      out[#out + 1] = v
      out[#out + 1] = score
      n = n + 1
    else
      redis.call('HDEL', P .. 'wid', jid)
    end
  end
end
return out
