-- Takes back the in-progress lists of dead nodes (their alive key gone) into this node's, in one
-- step. KEYS[1]: this node's list; KEYS[2]: bulkhead:bridge:nodes.
-- ARGV: the key prefix ("bulkhead:bridge:"), this node. Returns {reaped nodes, jobs moved}: the
-- caller takes the moved jobs as it takes any (bulkhead's store recognises the ones it holds).
local prefix, me = ARGV[1], ARGV[2]
local reaped, moved = {}, {}
for _, node in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if node ~= me and redis.call('EXISTS', prefix .. 'alive:' .. node) == 0 then
    local list = prefix .. 'taking:' .. node
    while true do
      local job = redis.call('RPOPLPUSH', list, KEYS[1])
      if not job then break end
      moved[#moved + 1] = job
    end
    redis.call('SREM', KEYS[2], node)
    reaped[#reaped + 1] = node
  end
end
return {reaped, moved}
