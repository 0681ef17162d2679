-- TakenMarks::Expire: deletes up to `limit` marks of {NS}:taken whose expiry is at or before
-- `now`. ARGV: P, now (µs), limit. Returns how many.
local gone = redis.call('ZRANGEBYSCORE', P .. 'taken', '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])
call_many('ZREM', P .. 'taken', gone)
return #gone
