-- requires: call_state, groups, idempotency, moderation, moderation_history, reader, shown
-- moderation_group_set: sets (or clears) one group's moderation state on one shard of its board (the
-- store calls every shard: each holds every group state), retry-safe; or, asked only to check, answers
-- what the shard would hold with it, changing nothing. Nothing of any count changes: reads leave the
-- group's items out (order_lib's exceptions, moderation_lib) from this call on, and list them again,
-- exactly as they would have, once it is allowed or cleared. The shard's version moves on a change, so
-- live streams answer it on their next tick. O(g log n): g the shard's group states (the board's limit).
-- Keys: cfg (the shard's config hash)
-- Args (reader.read_call, CALLS.moderation_group_set): the header (config version, now, no windows), then
--   group    the group id
--   state    "hidden" | "allowed" | "" (back to the default)
--   apply    "1": set it; "0": only answer what the shard would hold (nothing stored, no idempotency)
--   archive_periods, archive_rows   most archived periods whose kept exception positions the change
--            updates, and most work (rows) it spends on them (snapshot_shown_lib's index_change_end)
--   idem_key, idem_fingerprint, idem_context, idem_retention   idem_lib's (idem_key "": none)
-- Reply (reader.answer, CALLS.moderation_group_set, after idem_lib's outcome and context):
--   previous (the state it had; "": none), groups (group states the shard holds with it), items (items
--   of the shard those groups hold: what each read of the shard skips or places, besides item states),
--   archived (items of groups_lib's archived map those groups hold: what each read of the shard's kept
--   listings leaves out besides, moderation_history_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_PRUNING (a reset's prune has steps left on the shard,
--   prune_lib: the groups maps still hold entries of items no window holds, which the counts and the
--   effective states would take in; nothing was read or written, the service ends the prune and sends
--   the call again)

-- The group states the shard would hold with `group` in `state`, and how many items those groups hold
-- in the live map and in the archived map.
local function held_with(cfg_key, group, state)
  local group_states = redis.call('HGETALL', moderation.MODERATION.group_states_key(cfg_key))
  local held, seen = { count = 0, items = 0, archived = 0 }, false
  local function add(one)
    held.count, held.items = held.count + 1, held.items + groups.count_in(cfg_key, one)
    held.archived = held.archived + groups.archived_count(cfg_key, one)
  end
  for i = 1, #group_states, 2 do
    seen = seen or group_states[i] == group
    if group_states[i] ~= group or state ~= '' then add(group_states[i]) end
  end
  if not seen and state ~= '' then add(group) end
  return held
end

local function moderation_group_set(keys, args)
  local cfg_key = keys[1]
  -- A check sends no idem_key: it stores nothing.
  local answer, header, arg, idem, key, previous = moderation.begin_state_write(keys, args, CALLS.moderation_group_set)
  if answer then return answer end
  if call_state.config_field(cfg_key, 'pruning') then
    return redis.error_reply('TB_PRUNING a reset of the board is still pruning its groups maps')
  end
  local held = held_with(cfg_key, arg.group, arg.state)
  local reply = reader.answer(CALLS.moderation_group_set,
    { previous = previous, groups = held.count, items = held.items, archived = held.archived })
  if arg.apply ~= '1' then return idempotency.idem_finish(cfg_key, 'cfg', idem, header.now_ms, reply) end
  local begun = previous ~= arg.state and shown.index_change_begin(cfg_key, moderation_history.exceptions_of_cfg)
  moderation.MODERATION.write_state(cfg_key, key, arg.group, arg.state, previous)
  moderation.MODERATION.count_held(cfg_key, held.count, 'modgroups')
  moderation.MODERATION.group_state_changed(cfg_key, arg.group, arg.state)
  shown.index_change_end(cfg_key, begun, { periods = tonumber(arg.archive_periods), rows = tonumber(arg.archive_rows) })
  return idempotency.idem_finish(cfg_key, 'cfg', idem, header.now_ms, reply)
end
