-- A graceful stop: deletes this node's alive key (when it holds this process's token) and, when
-- its in-progress list is empty, its name in the registry. A list left (jobs that could not be
-- settled) keeps the name: another node takes it back, or this node at its next start.
-- KEYS[1]: alive key; KEYS[2]: bulkhead:bridge:nodes; KEYS[3]: the list. ARGV: node, token.
if redis.call('GET', KEYS[1]) == ARGV[2] then redis.call('DEL', KEYS[1]) end
if redis.call('LLEN', KEYS[3]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
return 1
