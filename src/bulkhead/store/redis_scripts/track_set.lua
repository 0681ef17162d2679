-- uses: batch_lib track_lib
-- TRACK SET. ARGV: P, jid, now, percent ('' keeps it), desc flag ('1' sets desc), desc.
local jid, now = ARGV[2], ARGV[3]
local k = tlive(jid, now)
if not k then
  k = P .. 'track:' .. jid
  redis.call('DEL', k)
  redis.call('HSET', k, 'state', '')
end
if ARGV[4] ~= '' then redis.call('HSET', k, 'percent', ARGV[4]) end
if ARGV[5] == '1' then redis.call('HSET', k, 'desc', ARGV[6]) end
ttouch(jid, k, now)
return 1
