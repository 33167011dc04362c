-- requires: counters, keyspace, reader
-- counter_delete: removes every count hash of a counter, all its index entries and its names entry
-- ({...}:names, derived from the known key) in one atomic step.
-- Index entries of precisions that are no longer configured are found with ZSCAN of the bucket's index
-- and their hashes derived from the index key ("<tag>:known" -> "<tag>:count:<prec>:<name>"), same slot.
-- Keys: known (the bucket's known-counters index zset), then the counter's count hash of each
--   configured precision, in the order of `precisions`
-- Args (reader.read_call, CALLS.delete): the header (no version, time 0: it reads none, no windows), then
--   name        counter name
--   precisions  every configured precision (s), joined by commas, one per count hash
-- Reply (reader.answer, CALLS.delete): removed, the index entries and count hashes removed (0: the
--   counter did not exist)
local function delete(keys, args)
  local known_key = keys[1]
  local _, arg = reader.read_call(args, CALLS.delete)
  local name = arg.name
  local removed = 0
  local _, texts = counters.precisions_of(arg.precisions)
  for i = 1, #texts do
    removed = removed + redis.call('DEL', keys[1 + i])
    removed = removed + redis.call('ZREM', known_key, texts[i] .. ':' .. name)
  end
  local cursor = '0'
  repeat
    local page = redis.call('ZSCAN', known_key, cursor, 'MATCH', '*:' .. name, 'COUNT', 500)
    cursor = page[1]
    for i = 1, #page[2], 2 do
      local member = page[2][i]
      local prec = string.match(member, '^(%d+):')
      if prec and string.sub(member, #prec + 2) == name then
        removed = removed + redis.call('DEL', keyspace.sibling_key(known_key, 'known', 'count:' .. member))
        removed = removed + redis.call('ZREM', known_key, member)
      end
    end
  until cursor == '0'
  redis.call('ZREM', keyspace.sibling_key(known_key, 'known', 'names'), name)
  return reader.answer(CALLS.delete, { removed = removed })
end
