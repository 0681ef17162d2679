-- Sizes and counters. ARGV: P. Returns {scheduled, retry, dead, working, processed, failures,
-- queue, size, paused (0/1), head's enqueued_us, queue, ...}.
local out = {redis.call('ZCARD', P .. 'scheduled'), redis.call('ZCARD', P .. 'retry'),
             redis.call('ZCARD', P .. 'dead'),
             redis.call('ZCARD', P .. 'working') - (redis.call('ZSCORE', P .. 'working', LARGE) and 1 or 0),
             redis.call('HGET', P .. 'stats', 'processed') or '0',
             redis.call('HGET', P .. 'stats', 'failures') or '0'}
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
  local key = P .. 'q:' .. q
  local head = redis.call('LINDEX', key, -1)
  local enq = '0'
  if head then
    local v = redis.call('HGET', JOBS, head)
    if v then enq = parse(v).enq end
  end
  out[#out + 1] = q
  out[#out + 1] = redis.call('LLEN', key)
  out[#out + 1] = redis.call('SISMEMBER', P .. 'paused', q)
  out[#out + 1] = enq
end
return out
