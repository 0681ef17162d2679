-- QUEUE REMOVE: deletes known queues with their jobs. ARGV: P, queue... ('*': every known queue).
local names = {}
for i = 2, #ARGV do
  if ARGV[i] == '*' then
    for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do names[#names + 1] = q end
  elseif redis.call('SISMEMBER', P .. 'queues', ARGV[i]) == 1 then
    names[#names + 1] = ARGV[i]
  end
end
for _, q in ipairs(names) do
  for _, jid in ipairs(redis.call('LRANGE', P .. 'q:' .. q, 0, -1)) do
    redis.call('HDEL', JOBS, jid)
  end
  redis.call('DEL', P .. 'q:' .. q)
  redis.call('SREM', P .. 'queues', q)
  redis.call('SREM', P .. 'paused', q)
end
return #names
