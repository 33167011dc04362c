-- requires: board_write, call_state, order, reader
-- score_spread_shards: score_spread summed over the shards of a sharded board one Redis node serves, in
-- one call instead of one per shard: their listed items, the lowest and highest listed score, how
-- many listed items score up to each bound, and for each pick the lowest scores of its range. Read-only
-- and across hash tags like count_above_shards (allow-cross-slot-keys: keys of any slot this node
-- serves; a key it does not serve fails the call and the caller reads shard by shard). A shard with
-- expired slots not yet drained is not read but named, for the caller to read with score_spread, which
-- drains it first. Each count is O(log n) (ZCOUNT), each pick O(log n + scores) (ZRANGE BYSCORE
-- LIMIT): the caller bounds the shards x (bounds + picks) one call reads, and `entries` its picks' scores.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.score_spread_shards): the header with the one window (no budget), then
--   window_key  the window's key name
--   shards      JSON array: the config hash of each shard to read
--   bounds      space-separated upper bounds as ZCOUNT takes them ("12": up to 12, "(12": below 12)
--   picks       space-separated triples "lo hi take": each shard's lowest `take` scores in [lo, hi]
--   entries     most scores the picks read in all
-- Reply (reader.answer, CALLS.score_spread_shards): pending { position (1-based, in `shards`) of each
--   shard not read }; listed (summed over the shards read); min and max (the lowest and highest listed
--   score over them, "" when none lists one); counts { listed items up to each bound, summed };
--   picked { per pick { the scores read, ascending shard by shard } }; cut (1: `entries` may have left
--   a pick short of a shard's `take`)
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

-- Adds one shard's lowest scores in each pick's range to `spread.picked`, while `room` (entries) lasts
-- (cut: 1 once a pick may have been left short).
-- On a sum board a pick's range lies above 0: the items held but not listed fall outside it.
local function pick_shard(spread, top_key, picks)
  for p, pick in ipairs(picks) do
    local take = math.min(pick.take, spread.room)
    if take == 0 then
      spread.cut = 1
      return
    end
    local found = redis.call('ZRANGE', top_key, pick.lo, pick.hi, 'BYSCORE', 'LIMIT', 0, take, 'WITHSCORES')
    local scores = spread.picked[p]
    for i = 2, #found, 2 do scores[#scores + 1] = found[i] end
    spread.room = spread.room - #found / 2
    -- Stopped by the room rather than the pick's take: the shard may hold more of the range.
    if #found / 2 == take and take < pick.take then spread.cut = 1 end
  end
end

local function parse_picks(text)
  local words, picks = {}, {}
  for word in string.gmatch(text, '%S+') do words[#words + 1] = word end
  for i = 1, #words, 3 do picks[#picks + 1] = { lo = words[i], hi = words[i + 1], take = tonumber(words[i + 2]) } end
  return picks
end

local function score_spread_shards(keys, args)
  local route = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.score_spread_shards)
  local bounds = {}
  for bound in string.gmatch(arg.bounds, '%S+') do bounds[#bounds + 1] = bound end
  local picks = parse_picks(arg.picks)
  local spread = { pending = {}, listed = 0, min = '', max = '', counts = {}, picked = {}, cut = 0 }
  spread.room = tonumber(arg.entries)
  for b = 1, #bounds do spread.counts[b] = 0 end
  for p = 1, #picks do spread.picked[p] = {} end
  local err = board_write.visit_settled(arg.shards, header, { arg.window_key }, spread.pending, function(tops)
    add_shard(spread, tops[1], bounds)
    pick_shard(spread, tops[1], picks)
  end)
  if err then return err end
  return reader.answer(CALLS.score_spread_shards, spread)
end
