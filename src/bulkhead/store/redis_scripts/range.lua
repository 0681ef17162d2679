-- Jobs of a sorted set in score order. ARGV: P, set, mode, a, b. mode 'index': positions a..b;
-- mode 'due': scores up to a, at most b jobs. Returns {jid, value, score, ...}.
local set = P .. ARGV[2]
local r
if ARGV[3] == 'index' then
  r = redis.call('ZRANGE', set, ARGV[4], ARGV[5], 'WITHSCORES')
else
  r = redis.call('ZRANGEBYSCORE', set, '-inf', ARGV[4], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[5]))
end
local out = {}
for i = 1, #r, 2 do
  local v = redis.call('HGET', JOBS, r[i])
  if v then
    out[#out + 1] = r[i]
    out[#out + 1] = v
    out[#out + 1] = r[i + 1]
  end
end
return out
