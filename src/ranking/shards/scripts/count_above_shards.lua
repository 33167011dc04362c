-- requires: board_write, call_state, order, reader
-- count_above_shards: count_above summed over several shards of a sharded board that live on this Redis
-- node, in one call instead of one per shard (the other shards' share of a write's or an item's rank).
-- One of the scripts that read keys of several hash tags: the shards' config keys come as an argument,
-- and the allow-cross-slot-keys flag (Redis >= 7.0) lets it read keys of any slot this node serves. On a
-- Cluster the caller groups shards by node; a key this node does not serve fails the call ("non local
-- key"), and the caller then counts shard by shard. Read-only (no-writes): a shard with expired slots
-- not yet drained is not counted here but named in the reply, for the caller to count with
-- count_above, which drains it first.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.count_above_shards): the header with the windows counted (no budget), then
--   window_keys  JSON array: each window's key name (a segment's: <window>~<segment>)
--   scores       JSON array: the score of each window to count above (<= 0: count nothing)
--   marks        JSON array: a tie mark for each window's score, or "" (as count_above)
--   shards       JSON array: the config hash of each shard to count
--   ranked       1 to count each window's listed items too, else 0 (a write's rank needs only those above:
--                one command less per shard and window)
-- Reply (reader.answer, CALLS.count_above_shards): pending { position (1-based, in `shards`) of each
--   shard not counted }, above { per window, summed over the counted shards }, ranked { likewise; 0
--   when not asked }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)
local function count_above_shards(keys, args)
  call_state.begin_call(keys, args)
  local route = keys[1]
  local header, arg = reader.read_call(args, CALLS.count_above_shards)
  local window_keys, scores, marks = cjson.decode(arg.window_keys), cjson.decode(arg.scores), cjson.decode(arg.marks)
  local above, ranked, pending, with_ranked = {}, {}, {}, arg.ranked == '1'
  for w = 1, #header.windows do
    above[w], ranked[w] = 0, 0
  end
  local err = board_write.visit_settled(arg.shards, header, window_keys, pending, function(tops)
    for w = 1, #tops do
      if order.listed(tops[w], scores[w]) then above[w] = above[w] + order.ahead(tops[w], scores[w], marks[w]) end
      if with_ranked then ranked[w] = ranked[w] + order.listed_count(tops[w]) end
    end
  end)
  if err then return err end
  return reader.answer(CALLS.count_above_shards, { pending = pending, above = above, ranked = ranked })
end
