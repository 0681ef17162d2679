-- Claims a cron entry's firing. ARGV: P, entry, due_us. {NS}:cron holds entry -> the last
-- claimed due time (µs). Returns 1 when `due` is after it (now recorded), else 0.
local last = redis.call('HGET', P .. 'cron', ARGV[2])
if last and tonumber(last) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', P .. 'cron', ARGV[2], ARGV[3])
return 1
