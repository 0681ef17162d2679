-- A node's heartbeat. ARGV: P, node, ttl_ms[, roster]. Sets {NS}:alive:NODE (expiring after
-- ttl_ms) and registers the node in {NS}:nodes; with `roster`, sets {NS}:roster:NODE to it with
-- the same expiry (its workers, for the other nodes' views). Returns {had, live}: had is 1, or 0 when the alive key was
-- missing (first beat, or the node was silent longer than its TTL and may have been reaped); live
-- counts the registered nodes whose alive key exists, this one included (the cluster size the
-- delivery caps are shared by; {NS}:nodes names them: no KEYS, no SCAN).
local alive = P .. 'alive:' .. ARGV[2]
local had = redis.call('EXISTS', alive)
redis.call('SET', alive, '1', 'PX', ARGV[3])
if ARGV[4] then redis.call('SET', P .. 'roster:' .. ARGV[2], ARGV[4], 'PX', ARGV[3]) end
redis.call('SADD', P .. 'nodes', ARGV[2])
local live = 0
for _, node in ipairs(redis.call('SMEMBERS', P .. 'nodes')) do
  live = live + redis.call('EXISTS', P .. 'alive:' .. node)
end
return {had, live}
