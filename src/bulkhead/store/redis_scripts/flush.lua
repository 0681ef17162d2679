-- FLUSH: every job, queue, counter and pause flag. Signing keys, host states, the node registry and
-- the layout stay. ARGV: P.
-- Every throttle slot belongs to a reserved job.
for _, jid in ipairs(redis.call('ZRANGE', P .. 'working', 0, -1)) do
  local v = redis.call('HGET', JOBS, jid)
  if v then release_slot(jid, parse(v).queue) end
end
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do redis.call('DEL', P .. 'q:' .. q) end
for _, node in ipairs(redis.call('SMEMBERS', P .. 'nodes')) do
  redis.call('DEL', P .. 'reserved:' .. node)
end
redis.call('DEL', JOBS, P .. 'queues', P .. 'paused', P .. 'scheduled', P .. 'retry', P .. 'dead',
           P .. 'working', P .. 'stats')
return 1
