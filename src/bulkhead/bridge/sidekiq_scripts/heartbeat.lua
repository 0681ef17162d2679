-- Keeps this node alive: its alive key (holding this process's token) for ARGV[3] ms, and its name
-- in the registry. KEYS[1]: bulkhead:bridge:alive:NODE; KEYS[2]: bulkhead:bridge:nodes.
-- ARGV: node, token, ttl (ms). Returns {1, had}: refreshed, and whether the key was still there
-- (0: it lapsed, and another node may have taken this node's list back); {0, 0} when another
-- process holds the name (its token in the key): nothing changed.
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[2] then return {0, 0} end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
return {1, cur and 1 or 0}
