-- requires: idempotency, moderation, moderation_history, reader, shown
-- moderation_set: sets (or clears) one item's moderation state on the item's shard, retry-safe. Nothing
-- of its counts changes: reads leave a hidden item out (order_lib's exceptions) from this call on, and
-- list it again, exactly as they would have, once it is allowed or cleared. The shard's version moves,
-- so live streams answer the change on their next tick.
-- Keys: cfg (the item's shard's config hash)
-- Args (reader.read_call, CALLS.moderation_set): the header (config version, now, no windows), then
--   item     the item id
--   state    "hidden" | "allowed" | "" (back to the default: listed, or on a review board waiting)
--   most     states the shard may hold (the board's limit): a new state beyond it is refused
--   archive_periods, archive_rows   most archived periods whose kept exception positions the change
--            updates, and most work (rows) it spends on them (snapshot_shown_lib's index_change_end)
--   idem_key, idem_fingerprint, idem_context, idem_retention   idem_lib's (idem_key "": none)
-- Reply (reader.answer, CALLS.moderation_set, after idem_lib's outcome and context):
--   previous (the state it had; "": none), held (states the shard holds now)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_QUOTA moderatedItems <held> (nothing stored)
local function moderation_set(keys, args)
  local cfg_key = keys[1]
  local answer, header, arg, idem, states, previous = moderation.begin_state_write(keys, args, CALLS.moderation_set)
  if answer then return answer end
  if arg.state ~= '' and previous == '' then
    local held = redis.call('HLEN', states)
    if held >= tonumber(arg.most) then return redis.error_reply('TB_QUOTA moderatedItems ' .. held) end
  end
  local begun = previous ~= arg.state and shown.index_change_begin(cfg_key, moderation_history.exceptions_of_cfg)
  moderation.MODERATION.write_state(cfg_key, states, arg.item, arg.state, previous)
  moderation.MODERATION.item_changed(cfg_key, arg.item)
  shown.index_change_end(cfg_key, begun, { periods = tonumber(arg.archive_periods), rows = tonumber(arg.archive_rows) })
  local held = redis.call('HLEN', states)
  moderation.MODERATION.count_held(cfg_key, held)
  local reply = reader.answer(CALLS.moderation_set, { previous = previous, held = held })
  return idempotency.idem_finish(cfg_key, 'cfg', idem, header.now_ms, reply)
end
