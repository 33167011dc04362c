-- requires: group_of, keyspace, reader, snapshot
-- group_shard_step: one shard of a sharded member board in a group board's settle round
-- (src/ranking/group-boards/sharded-settle.ts): drains the member window's expired slots on the shard
-- (each drained member moves in its group), then group_of_lib's shard_step: clears the marks the
-- round's stored scores settled, reads the asked groups' best members, names the shard's dirty groups.
-- Keys: cfg (the shard's config hash), slots (the member window's slots index zset), top (its results zset)
-- Args (reader.read_call, CALLS.group_shard_step): the header with the member window, then
--   board     the group board
--   rule      "<top> <decay>" the scores are computed with
--   top       members a group's score sums
--   clears    JSON [group, generation, ...]: the marks to clear where the generation is unchanged
--   fetches   JSON [group, ...]: the groups whose best members to answer
--   most      dirty groups to name at most
-- Reply (reader.answer, CALLS.group_shard_step):
--   draining  1: expired slots remain (call again; nothing else done), else 0
--   rows      JSON [[generation, [member, score, ...]], ...], one per fetched group
--   dirty     JSON [group, ...]: some of the shard's dirty groups
--   parts     the shard's recorded parts of listings not merged yet (group_parts_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function group_shard_step(keys, args)
  local cfg_key, slots_key = keys[1], keys[2]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.group_shard_step)
  if refused then return refused end
  if draining == 1 then return reader.answer(CALLS.group_shard_step, { draining = 1, rows = '[]', dirty = '[]', parts = 0 }) end
  local window = string.sub(slots_key, #cfg_key - 2, -7)
  local step = {
    clears = cjson.decode(arg.clears),
    fetches = cjson.decode(arg.fetches),
    top = tonumber(arg.top),
    most = tonumber(arg.most),
  }
  local rows, dirty = group_of.GROUP_OF.shard_step(cfg_key, window, arg.board, arg.rule, step)
  local encoded = { draining = 0, rows = #rows == 0 and '[]' or cjson.encode(rows) }
  encoded.dirty = #dirty == 0 and '[]' or cjson.encode(dirty)
  encoded.parts = redis.call('ZCARD', keyspace.sibling_key(cfg_key, 'cfg', window .. '%' .. arg.board .. ':parts'))
  return reader.answer(CALLS.group_shard_step, encoded)
end
