-- requires: actor_blocks, actor_log, call_state, group_of, group_parts, keyspace, reader
-- group_history_retract: an item retraction on a sharded member board, on shard 0, where the group
-- boards' merged listings live (group_parts_lib): the item out of each group board's kept listings
-- over the member board's windows (group_history_out_lib's listings_out, as retract_item's hook
-- item_history_out does on the item's own shard), after the cursors of shard 0's retraction record;
-- first the item noted for each group board, so a merge storing a listing it read before the
-- retraction reached the parts takes the item out too (group_parts_lib's retractions_applied).
-- Keys: cfg (shard 0's config hash), record (shard 0's record of the retraction: "g:<base>" cursors,
--       indexed as admin steps' records are, so the board's drop unlinks it: actor_blocks_lib)
-- Args (reader.read_call, CALLS.group_history_retract): the header (now; no windows), then
--   windows   JSON [window, ...]: the member board's windows
--   item      the retracted item
--   most      units of work this step does (retract_item's)
-- Reply (reader.answer, CALLS.group_history_retract):
--   done      1: every listing rewritten, else 0 (call again)
--   taken     units of work done
-- The reply; the record's cursors stay as long as a retraction's record does (actor_lib's KEEP_SEC).
local function answered(record, done, taken)
  if redis.call('TTL', record) == -1 then redis.call('EXPIRE', record, actor_log.ACTORS.KEEP_SEC) end
  return reader.answer(CALLS.group_history_retract, { done = done, taken = taken })
end

local function group_history_retract(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key, record = keys[1], keys[2]
  local header, arg = reader.read_call(args, CALLS.group_history_retract)
  actor_blocks.hold_record(cfg_key, record, actor_log.ACTORS.KEEP_SEC, header.now_ms)
  local budget, costs = tonumber(arg.most), { listing = actor_log.ACTORS.STEP.LISTING, rows = actor_log.ACTORS.STEP.LISTING_ROWS }
  local left = budget
  for _, window in ipairs(cjson.decode(arg.windows)) do
    local bases = group_of.GROUP_OF.bases_of(keyspace.sibling_key(cfg_key, 'cfg', window .. ':top'))
    for _, base in ipairs(bases or {}) do group_parts.retraction_noted(base, arg.item, header.now_ms) end
    if bases then left = group_of.GROUP_OF.listings_out(bases, record, arg.item, left, costs) end
    if left <= 0 then return answered(record, 0, budget) end
  end
  return answered(record, 1, budget - left)
end
