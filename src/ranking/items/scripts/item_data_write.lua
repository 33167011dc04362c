-- requires: board_write, idempotency, item_data, reader, snapshot
-- item_data_write: stores or removes one item's data on the item's shard, retry-safe.
-- Keys: cfg (the item's shard's config hash: holds the config version and the windows)
-- Args (reader.read_call, CALLS.item_data_write): the header (config version, now, no windows), then
--   item        the item id
--   data        the data (a JSON object, at most 1 024 bytes), or "" to remove it
--   data_bytes  bytes the stored data may grow by (the client's itemDataBytes allowance; -1: no quota)
--   idem_key, idem_fingerprint, idem_context, idem_retention   idem_lib's (idem_key "": none)
-- Reply (reader.answer, CALLS.item_data_write, after idem_lib's outcome, context and, applied only,
--   the bytes the data grew by): stored (1)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_ITEM_NOT_HELD (data for an item no window holds: nothing
--        stored, so data never outlives its item and stays bounded by the board's items), TB_QUOTA
--        itemDataBytes <growth> (the data would grow by more than the allowance: nothing stored)
local function item_data_write(keys, args)
  local cfg_key = keys[1]
  local answer, header, arg, idem = board_write.begin_board_write(keys, args, CALLS.item_data_write)
  if answer then return answer end
  local item, data = arg.item, arg.data
  local grown = 0
  if data == '' then
    redis.call('HDEL', item_data.item_data_key(cfg_key), item)
  elseif item_data.item_held(cfg_key, item) then
    -- Growth in bytes over what the item holds now: a replacement no longer than it costs nothing.
    grown = math.max(0, #data - redis.call('HSTRLEN', item_data.item_data_key(cfg_key), item))
    local allowance = tonumber(arg.data_bytes)
    if allowance >= 0 and grown > allowance then return redis.error_reply('TB_QUOTA itemDataBytes ' .. grown) end
    redis.call('HSET', item_data.item_data_key(cfg_key), item, data)
  else
    return redis.error_reply('TB_ITEM_NOT_HELD no window holds the item')
  end
  snapshot.bump_version(cfg_key)
  local reply = reader.answer(CALLS.item_data_write, { stored = 1 })
  return idempotency.idem_finish(cfg_key, 'cfg', idem, header.now_ms, reply,
    reader.record_of(CALLS.item_data_write.created, { data_bytes = grown }, {}))
end
