-- requires: keyspace
-- counter_delete: removes every count hash of a counter, all its index entries and its names entry
-- ({...}:names, derived from KEYS[1]) in one atomic step.
-- Index entries of precisions that are no longer configured are found with ZSCAN of the bucket's index
-- and their hashes derived from the index key ("<tag>:known" -> "<tag>:count:<prec>:<name>"), same slot.
-- KEYS: dynamic
-- KEYS[1]        the bucket's known-counters index zset
-- KEYS[1+i]      (i = 1..P) the counter's count hash of configured precision i
-- ARGV[1]        counter name
-- ARGV[1+i]      configured precision i, seconds
-- Reply: number of index entries and count hashes removed (0: the counter did not exist)
local function delete(keys, args)
  local name = args[1]
  local removed = 0
  for i = 2, #keys do
    removed = removed + redis.call('DEL', keys[i])
    removed = removed + redis.call('ZREM', keys[1], args[i] .. ':' .. name)
  end
  local cursor = '0'
  repeat
    local page = redis.call('ZSCAN', keys[1], cursor, 'MATCH', '*:' .. name, 'COUNT', 500)
    cursor = page[1]
    for i = 1, #page[2], 2 do
      local member = page[2][i]
      local prec = string.match(member, '^(%d+):')
      if prec and string.sub(member, #prec + 2) == name then
        removed = removed + redis.call('DEL', keyspace.sibling_key(keys[1], 'known', 'count:' .. member))
        removed = removed + redis.call('ZREM', keys[1], member)
      end
    end
  until cursor == '0'
  redis.call('ZREM', keyspace.sibling_key(keys[1], 'known', 'names'), name)
  return removed
end
