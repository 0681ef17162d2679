-- Outcome jobs for the application's Sidekiq, as Sidekiq::Client#atomic_push writes jobs
-- (lib/sidekiq/client.rb): the queue in the set `queues`, the jobs LPUSHed onto queue:NAME, in one
-- step. KEYS[1]: queue:NAME; KEYS[2]: queues. ARGV: NAME, then the jobs (JSON). Returns how many.
redis.call('SADD', KEYS[2], ARGV[1])
for first = 2, #ARGV, 500 do
  redis.call('LPUSH', KEYS[1], unpack(ARGV, first, math.min(#ARGV, first + 499)))
end
return #ARGV - 1
