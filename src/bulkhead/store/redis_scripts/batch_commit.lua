-- uses: batch_lib track_lib
-- BATCH COMMIT. ARGV: P, bid, now. Returns 1, or 0 when the batch is unknown or expired.
local bid, now = ARGV[2], ARGV[3]
local k = blive(bid, now)
if not k then return 0 end
if redis.call('HGET', k, 'committed') ~= '1' then
  redis.call('HSET', k, 'committed', '1')
  bexpire_at(bid, k, 0)
  bcount('committed')
end
local up = bsettle(bid, k, now)
if up and bstr(k, 'parent') ~= '' then bapply(bid, up, now) end
return 1
