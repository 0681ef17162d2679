-- Ends jobs this node took: the ones now in bulkhead's store leave the in-progress list, the ones
-- it refused move to Sidekiq's dead set (as api.rb DeadSet#kill: ZADD with the time as score, then
-- trimmed by age and by count), in one step.
-- KEYS[1]: bulkhead:bridge:taking:NODE; KEYS[2]: dead.
-- ARGV: n_done, n_dead, score (now, float seconds), cutoff (now - dead_timeout_in_seconds),
-- -dead_max_jobs (ZREMRANGEBYRANK's stop: keeps dead_max_jobs - 1, as Sidekiq does), then the
-- n_done jobs, then n_dead pairs (job, dead set entry).
-- Each job leaves the list once (LREM count -1: the oldest copy, found from the right end where
-- the oldest are). A job no longer in the list was taken back by another node (this one was
-- presumed dead): it is not added to the dead set here (that node settles it). Returns one
-- integer per job, done ones first: 1 when it left the list, else 0.
local n_done, n_dead = tonumber(ARGV[1]), tonumber(ARGV[2])
local out, added = {}, false
for i = 6, 5 + n_done do
  out[#out + 1] = redis.call('LREM', KEYS[1], -1, ARGV[i])
end
for i = 6 + n_done, 5 + n_done + 2 * n_dead, 2 do
  local removed = redis.call('LREM', KEYS[1], -1, ARGV[i])
  if removed == 1 then
    redis.call('ZADD', KEYS[2], ARGV[3], ARGV[i + 1])
    added = true
  end
  out[#out + 1] = removed
end
if added then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, ARGV[5])
end
return out
