-- QUEUE PAUSE / RESUME. ARGV: P, '1' (pause) or '0', node, queue... ('*': every known queue).
local pause = ARGV[2] == '1'
local names = {}
for i = 4, #ARGV do
  if ARGV[i] == '*' then
    for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do names[#names + 1] = q end
  else
    names[#names + 1] = ARGV[i]
  end
end
for _, q in ipairs(names) do
  redis.call('SADD', P .. 'queues', q)
  if pause then
    redis.call('SADD', P .. 'paused', q)
  elseif redis.call('SREM', P .. 'paused', q) == 1 then
    wake(ARGV[3], q)
  end
end
return #names
