-- requires: call_state, groups, reader
-- groups_read: the groups of given items of one shard (the rows of a listing).
-- Keys: cfg (the shard's config hash)
-- Args (reader.read_call, CALLS.groups_read): the header (no config version, now 0: it reads no
--   clock, no windows), then items: JSON array of item ids (at least one)
-- Reply (reader.answer, CALLS.groups_read): groups (of each item; false: none)
local function groups_read(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.groups_read)
  return reader.answer(CALLS.groups_read, { groups = groups.groups_of(cfg_key, cjson.decode(arg.items)) })
end
