-- FLUSH: every job, queue, counter, pause flag, batch and tracking record. Signing keys, host states, the node registry and
-- the layout stay. ARGV: P.
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do redis.call('DEL', P .. 'q:' .. q) end
for _, node in ipairs(redis.call('SMEMBERS', P .. 'nodes')) do
  redis.call('DEL', P .. 'reserved:' .. node)
end
for _, bid in ipairs(redis.call('SMEMBERS', P .. 'batches')) do redis.call('DEL', P .. 'batch:' .. bid) end
for _, jid in ipairs(redis.call('ZRANGE', P .. 'track_expiry', 0, -1)) do
  redis.call('DEL', P .. 'track:' .. jid)
end
redis.call('DEL', P .. 'track_expiry', P .. 'batches', P .. 'batch_members', P .. 'batch_cbs', P .. 'batch_expiry')
redis.call('DEL', JOBS, P .. 'queues', P .. 'paused', P .. 'scheduled', P .. 'retry', P .. 'dead',
           P .. 'working', P .. 'stats')
return 1
