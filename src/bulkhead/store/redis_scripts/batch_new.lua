-- uses: batch_lib track_lib
-- BATCH NEW. ARGV: P, bid, now, parent_bid, description, created_us, complete_jid, complete
-- value, success_jid, success value (a callback's value: the job as scheduled; '' when none).
-- Returns 1, 0 when the bid is taken, -1 when the parent is unknown.
local bid, now, parent = ARGV[2], ARGV[3], ARGV[4]
local k = bkey(bid)
if redis.call('EXISTS', k) == 1 then return 0 end
local pk = nil
if parent ~= '' then
  pk = blive(parent, now)
  if not pk then return -1 end
end
redis.call('HSET', k, 'parent', parent, 'desc', ARGV[5], 'created', ARGV[6], 'committed', '0',
           'total', '0', 'pending', '0', 'failed', '0', 'executed', '0', 'complete_st', '',
           'success_st', '', 'told', '0', 'complete_jid', ARGV[7], 'complete_v', ARGV[8],
           'success_jid', ARGV[9], 'success_v', ARGV[10])
bexpire_at(bid, k, tonumber(ARGV[6]) + 1800000000)
redis.call('SADD', P .. 'batches', bid)
bcount('created')
if pk then
  redis.call('HSET', MEMBERS, bid, parent .. '\tp')
  redis.call('HINCRBY', pk, 'total', 1)
  redis.call('HINCRBY', pk, 'pending', 1)
end
return 1
