-- requires: call_state, group_parts, keyspace, reader
-- group_history_parts: one shard of a sharded member board in the merge of a group board's listings
-- (group_parts_lib; src/ranking/group-boards/group-history.ts): answers the shard's recorded parts,
-- or drops those at or before `upto` once merged.
-- Keys: cfg (the shard's config hash)
-- Args (reader.read_call, CALLS.group_history_parts): the header (no windows), then
--   board     the group board
--   window    the member window W
--   upto      "": answer the parts; else drop the parts at or before this boundary (unix s)
-- Reply (reader.answer, CALLS.group_history_parts):
--   parts     JSON [[at, over (0|1), [[group, [item, score, retracted (0|1), ...]], ...]], ...], oldest first
--   since     the slot start of the shard's first membership change (-1: none)
local function group_history_parts(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key = keys[1]
  local _, arg = reader.read_call(args, CALLS.group_history_parts)
  local base = keyspace.sibling_key(cfg_key, 'cfg', arg.window .. '%' .. arg.board .. ':')
  if arg.upto ~= '' then
    group_parts.dropped(base, tonumber(arg.upto))
    return reader.answer(CALLS.group_history_parts, { parts = '[]', since = -1 })
  end
  local parts, since = group_parts.read_parts(base)
  return reader.answer(CALLS.group_history_parts, { parts = #parts == 0 and '[]' or cjson.encode(parts), since = since })
end
