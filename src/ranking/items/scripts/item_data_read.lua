-- requires: call_state, item_data
-- item_data_read: the data of given items of one shard (the rows of a listing).
-- KEYS: 1
-- KEYS[1]        the shard's config hash
-- ARGV[1] ...   item ids
-- Reply: { data of each item (false: none) }
local function item_data_read(keys, args)
  call_state.begin_call(keys, args)
  return item_data.item_data_of(keys[1], args)
end
