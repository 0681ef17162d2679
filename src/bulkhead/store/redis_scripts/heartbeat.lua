-- A node's heartbeat. ARGV: P, node, ttl_ms. Sets {NS}:alive:NODE (expiring after ttl_ms) and
-- registers the node in {NS}:nodes. Returns 1, or 0 when the alive key was missing (first beat,
-- or the node was silent longer than its TTL and may have been reaped).
local alive = P .. 'alive:' .. ARGV[2]
local had = redis.call('EXISTS', alive)
redis.call('SET', alive, '1', 'PX', ARGV[3])
redis.call('SADD', P .. 'nodes', ARGV[2])
return had
