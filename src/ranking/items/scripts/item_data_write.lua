-- requires: call_state, idempotency, item_data, snapshot, window
-- item_data_write: stores or removes one item's data on the item's shard, retry-safe.
-- KEYS: 1
-- KEYS[1]        the item's shard's config hash (holds the config version and the windows)
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        item id
-- ARGV[4]        the data (a JSON object, at most 1 024 bytes), or "" to remove it
-- ARGV[5..8]     idempotency key ("" for none), request fingerprint, context, retention (ms): idem_lib
-- ARGV[9]        bytes the stored data may grow by (the client's itemDataBytes allowance; -1: no quota)
-- Reply: { outcome, context, [applied only:] bytes the data grew by, 1 } (see idem_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_ITEM_NOT_HELD (data for an item no window holds: nothing
--        stored, so data never outlives its item and stays bounded by the board's items), TB_QUOTA
--        itemDataBytes <growth> (the data would grow by more than the allowance: nothing stored)
local function item_data_write(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(keys[1], args[1])
  if err then return redis.error_reply(err) end
  local now_ms = tonumber(args[2])
  local idem = idempotency.idem_of(args[5], '', args[6], args[7], args[8])
  local replay = idempotency.idem_begin(keys[1], 'cfg', idem, now_ms)
  if replay then return replay end
  local item, data = args[3], args[4]
  local grown = 0
  if data == '' then
    redis.call('HDEL', item_data.item_data_key(keys[1]), item)
  elseif item_data.item_held(keys[1], item) then
    -- Growth in bytes over what the item holds now: a replacement no longer than it costs nothing.
    grown = math.max(0, #data - redis.call('HSTRLEN', item_data.item_data_key(keys[1]), item))
    local allowance = tonumber(args[9])
    if allowance >= 0 and grown > allowance then return redis.error_reply('TB_QUOTA itemDataBytes ' .. grown) end
    redis.call('HSET', item_data.item_data_key(keys[1]), item, data)
  else
    return redis.error_reply('TB_ITEM_NOT_HELD no window holds the item')
  end
  snapshot.bump_version(keys[1])
  return idempotency.idem_finish(keys[1], 'cfg', idem, now_ms, { 1 }, { grown })
end
