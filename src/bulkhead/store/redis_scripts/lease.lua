-- A cluster-wide lease (the one half-open probe of a delivery host). ARGV: P, name, node, ttl_ms,
-- mode. {NS}:lease:NAME holds the node that holds it, expiring after ttl_ms.
-- 'take': takes the lease unless another node holds it (holding it already renews it); returns 1
-- when this node holds it now, else 0. 'release': deletes it if this node holds it; returns 1 if
-- it did.
local key = P .. 'lease:' .. ARGV[2]
local holder = redis.call('GET', key)
if ARGV[5] == 'release' then
  if holder == ARGV[3] then
    redis.call('DEL', key)
    return 1
  end
  return 0
end
if holder and holder ~= ARGV[3] then return 0 end
redis.call('SET', key, ARGV[3], 'PX', ARGV[4])
return 1
