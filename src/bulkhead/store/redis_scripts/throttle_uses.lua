-- Queue throttles' use, read only. ARGV: P, now_us, then per throttle (queue, per_worker
-- '1'/'0', timeout_us). Returns {in_use, max_per_worker, ...}, one pair per throttle: the slots
-- taken after now - timeout, and for per_worker the most of them one wid holds.
local now = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 3 do
  local q, per_worker, cutoff = ARGV[i], ARGV[i + 1] == '1', now - tonumber(ARGV[i + 2])
  local key = P .. 'thr:' .. q
  out[#out + 1] = redis.call('ZCOUNT', key, '(' .. fmt_int(cutoff), '+inf')
  local max = 0
  if per_worker then
    local per_wid = {}
    local pairs_ = redis.call('HGETALL', P .. 'thrwid:' .. q)
    for k = 1, #pairs_, 2 do
      local score = redis.call('ZSCORE', key, pairs_[k])
      if score and tonumber(score) > cutoff then
        local w = pairs_[k + 1]
        per_wid[w] = (per_wid[w] or 0) + 1
        if per_wid[w] > max then max = per_wid[w] end
      end
    end
  end
  out[#out + 1] = max
end
return out
