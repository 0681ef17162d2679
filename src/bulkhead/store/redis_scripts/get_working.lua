-- The reserved job `jid`. ARGV: P, jid. Returns {value, score} or false.
local v = redis.call('HGET', JOBS, ARGV[2])
if not v or parse(v).state ~= 4 then return false end
return {v, redis.call('ZSCORE', P .. 'working', ARGV[2])}
