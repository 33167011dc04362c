-- requires: board_write, call_state, keyspace, order, reader, snaprows
-- listing_counts_shards: listing_counts over several shards of a sharded board that one Redis node
-- serves, in one call instead of one per shard (the `metrics` of a page of archive rows). Read-only and
-- across hash tags like count_above_shards (allow-cross-slot-keys: keys of any slot this node serves; a
-- key it does not serve fails the call and the caller asks shard by shard). A shard whose window still
-- has a period to drain into its archive (expired slots, or archives being written out) is not read but
-- named, for the caller to ask with listing_counts, which drains it first.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.listing_counts_shards): the header with the one window (no budget), then
--   window_key  the window's key name
--   shards      JSON array: the config hash of each shard to read
--   asked       JSON array, per shard in `shards`: its asked list, as listing_counts' `asked` (the caller
--               bounds a call's work: LISTING_UNITS_PER_CALL)
-- Reply (reader.answer, CALLS.listing_counts_shards): pending { position (1-based, in `shards`) of each
--   shard not read }; listings (each shard read, in order: listing_counts' six entries per boundary
--   it was asked)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)

local function listing_counts_shards(keys, args)
  local route = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.listing_counts_shards)
  local asked_of = cjson.decode(arg.asked)
  local answer = { pending = {}, listings = {} }
  -- A shard is read once its window has nothing left to drain (listing_counts' expiry would do
  -- nothing): no slot before the live range (visit_settled), no archive still being written out.
  local err = board_write.visit_settled(arg.shards, header, { arg.window_key }, answer.pending, function(_, s, cfg_key)
    local slots_key = keyspace.sibling_key(cfg_key, 'cfg', arg.window_key .. ':slots')
    if redis.call('HLEN', keyspace.sibling_key(slots_key, 'slots', 'arch')) > 0 then return false end
    local base, ascending = keyspace.sibling_key(slots_key, 'slots', ''), order.ascending(slots_key)
    for _, asked in ipairs(asked_of[s]) do
      for _, entry in ipairs(snaprows.listing_counts_at(base, asked, ascending)) do
        answer.listings[#answer.listings + 1] = entry
      end
    end
  end)
  if err then return err end
  return reader.answer(CALLS.listing_counts_shards, answer)
end
