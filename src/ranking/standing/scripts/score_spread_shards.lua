-- requires: board_write, call_state, order, reader
-- score_spread_shards: score_spread summed over the shards of a sharded board one Redis node serves, in
-- one call instead of one per shard: their listed items, the lowest and highest listed score, and how
-- many listed items score up to each bound. Read-only and across hash tags like count_above_shards
-- (allow-cross-slot-keys: keys of any slot this node serves; a key it does not serve fails the call and
-- the caller reads shard by shard). A shard with expired slots not yet drained is not read but named,
-- for the caller to read with score_spread, which drains it first. Each count is O(log n) (ZCOUNT): the
-- caller bounds the shards x bounds one call counts.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.score_spread_shards): the header with the one window (no budget), then
--   window_key  the window's key name
--   shards      JSON array: the config hash of each shard to read
--   bounds      space-separated upper bounds as ZCOUNT takes them ("12": up to 12, "(12": below 12)
-- Reply (reader.answer, CALLS.score_spread_shards): pending { position (1-based, in `shards`) of each
--   shard not read }; listed (summed over the shards read); min and max (the lowest and highest listed
--   score over them, "" when none lists one); counts { listed items up to each bound, summed }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)

-- Adds one shard's part (score_spread's, its positions aside) to `spread`.
local function add_shard(spread, top_key, bounds)
  local listed = order.listed_count(top_key)
  -- Items held but not listed (0 or less on a sum board) sit below the listed ones: a count starts above them.
  local unlisted = redis.call('ZCARD', top_key) - listed
  local low = unlisted > 0 and '(0' or '-inf'
  for b, bound in ipairs(bounds) do
    spread.counts[b] = spread.counts[b] + redis.call('ZCOUNT', top_key, low, bound)
  end
  spread.listed = spread.listed + listed
  if listed == 0 then return end
  local lowest = redis.call('ZRANGE', top_key, unlisted, unlisted, 'WITHSCORES')[2]
  local highest = redis.call('ZRANGE', top_key, -1, -1, 'WITHSCORES')[2]
  if spread.min == '' or tonumber(lowest) < tonumber(spread.min) then spread.min = lowest end
  if spread.max == '' or tonumber(highest) > tonumber(spread.max) then spread.max = highest end
end

local function score_spread_shards(keys, args)
  local route = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.score_spread_shards)
  local bounds = {}
  for bound in string.gmatch(arg.bounds, '%S+') do bounds[#bounds + 1] = bound end
  local spread = { pending = {}, listed = 0, min = '', max = '', counts = {} }
  for b = 1, #bounds do spread.counts[b] = 0 end
  local err = board_write.visit_settled(arg.shards, header, { arg.window_key }, spread.pending, function(tops)
    add_shard(spread, tops[1], bounds)
  end)
  if err then return err end
  return reader.answer(CALLS.score_spread_shards, spread)
end
