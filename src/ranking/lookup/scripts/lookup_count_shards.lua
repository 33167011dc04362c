-- requires: board_write, call_state, order, reader
-- lookup_count_shards: the second round of a lookup on a sharded board, for every shard of the board
-- a Redis node serves in one call: how many items of those shards score above each given score in one
-- window. Read-only and across hash tags like count_above_shards (allow-cross-slot-keys: keys of any
-- slot this node serves; a key it does not serve fails the call and the caller counts shard by
-- shard). A shard with expired slots not yet drained is not counted but named, for the caller to
-- count with lookup, which drains it first.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.lookup_count_shards): the header with the one window (no budget), then
--   window_key    the window's key name (a segment's: <window>~<segment>)
--   ahead_scores, ahead_marks   JSON arrays of the same length: a score to count above and its tie
--                 mark (as lookup's: "" for none)
--   shards        JSON array: the config hash of each shard to count
-- Reply (reader.answer, CALLS.lookup_count_shards): pending { position (1-based, in `shards`) of each
--   shard not counted }; above { items ahead of each (score, mark), summed over the counted shards }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)
local function lookup_count_shards(keys, args)
  local route = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.lookup_count_shards)
  local scores, marks = cjson.decode(arg.ahead_scores), cjson.decode(arg.ahead_marks)
  local sums, pending = {}, {}
  for i = 1, #scores do sums[i] = 0 end
  local err = board_write.visit_settled(arg.shards, header, { arg.window_key }, pending, function(tops)
    for i = 1, #scores do sums[i] = sums[i] + order.ahead(tops[1], scores[i], marks[i]) end
  end)
  if err then return err end
  return reader.answer(CALLS.lookup_count_shards, { pending = pending, above = sums })
end
