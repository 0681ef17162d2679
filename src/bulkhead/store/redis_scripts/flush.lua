-- FLUSH: every job, queue, counter, pause flag, unique lock, batch and tracking record, and the
-- taken marks.
-- Signing keys, host states, cron firings, the node registry and the layout stay. ARGV: P.
-- Every throttle slot belongs to a reserved job.
for _, jid in ipairs(redis.call('ZRANGE', P .. 'working', 0, -1)) do
  local v = redis.call('HGET', JOBS, jid)
  if v then release_slot(jid, parse(v).queue) end
end
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do redis.call('DEL', P .. 'q:' .. q) end
for _, node in ipairs(redis.call('SMEMBERS', P .. 'nodes')) do
  redis.call('DEL', P .. 'reserved:' .. node)
end
for _, bid in ipairs(redis.call('SMEMBERS', P .. 'batches')) do redis.call('DEL', P .. 'batch:' .. bid) end
for _, jid in ipairs(redis.call('ZRANGE', P .. 'track_expiry', 0, -1)) do
  redis.call('DEL', P .. 'track:' .. jid)
end
redis.call('DEL', P .. 'track_expiry', P .. 'batches', P .. 'batch_members', P .. 'batch_cbs', P .. 'batch_expiry')
redis.call('DEL', P .. 'wid')  -- reservation holders
redis.call('DEL', P .. 'taken')  -- taken marks (store/taken_marks.h)
redis.call('DEL', JOBS, P .. 'queues', P .. 'paused', P .. 'scheduled', P .. 'retry', P .. 'dead',
           P .. 'working', P .. 'stats')
-- Unique locks, through their index (no KEYS: on a Redis shared with other applications that
-- would walk every key of every namespace).
for _, key in ipairs(redis.call('ZRANGE', P .. 'unique_locks', 0, -1)) do
  local value = redis.call('GET', P .. 'unique:' .. key)
  if value then
    redis.call('DEL', P .. 'unique_jid:' .. string.match(value, '^(.*)|'), P .. 'unique:' .. key)
  end
end
redis.call('DEL', P .. 'unique_locks')
return 1
