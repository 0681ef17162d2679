-- The job `jid` wherever it is (the dashboard's search). ARGV: P, jid. Returns {value, score}
-- (score '' when the job is queued) or false. The score is looked up in every sorted set, so this
-- script does not read the header.
local jid = ARGV[2]
local v = redis.call('HGET', JOBS, jid)
if not v then return false end
for _, set in ipairs({'working', 'scheduled', 'retry', 'dead'}) do
  local score = redis.call('ZSCORE', P .. set, jid)
  if score then return {v, score} end
end
return {v, ''}
