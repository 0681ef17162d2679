-- The worker rosters of the other live nodes (README, "Worker rosters"). ARGV: P, node.
-- Returns {node, roster, ...} for every registered node other than `node` whose alive key and
-- roster exist, by node.
local out = {}
local nodes = redis.call('SMEMBERS', P .. 'nodes')
table.sort(nodes)
for _, node in ipairs(nodes) do
  if node ~= ARGV[2] and redis.call('EXISTS', P .. 'alive:' .. node) == 1 then
    local roster = redis.call('GET', P .. 'roster:' .. node)
    if roster then
      out[#out + 1] = node
      out[#out + 1] = roster
    end
  end
end
return out
