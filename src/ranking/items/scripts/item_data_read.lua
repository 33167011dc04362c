-- requires: call_state, item_data, reader
-- item_data_read: the data of given items of one shard (the rows of a listing).
-- Keys: cfg (the shard's config hash)
-- Args (reader.read_call, CALLS.item_data_read): the header (no config version, now 0: it reads no
--   clock, no windows), then items: JSON array of item ids (at least one)
-- Reply (reader.answer, CALLS.item_data_read): data (of each item; false: none)
local function item_data_read(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.item_data_read)
  return reader.answer(CALLS.item_data_read, { data = item_data.item_data_of(cfg_key, cjson.decode(arg.items)) })
end
