-- requires: board_write, call_state, order, reader
-- score_spread_shards: score_spread summed over the shards of a sharded board one Redis node serves, in
-- one call instead of one per shard: their listed items, the lowest and highest listed score, how
-- many listed items score up to each bound, and for each pick the lowest scores of its range. Read-only
-- and across hash tags like count_above_shards (allow-cross-slot-keys: keys of any slot this node
-- serves; a key it does not serve fails the call and the caller reads shard by shard). A shard with
-- expired slots not yet drained is not read but named, for the caller to read with score_spread, which
-- drains it first (so is one holding more than `most_held` items). Each count is O(log n) (ZCOUNT; a shard of no more items than bounds reads its
-- scores instead), each pick O(log n + scores) (ZRANGE BYSCORE LIMIT): the caller bounds the shards x
-- (bounds + picks) one call reads, and `entries` its picks' scores.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.score_spread_shards): the header with the one window (no budget), then
--   window_key  the window's key name
--   shards      JSON array: the config hash of each shard to read
--   bounds      space-separated upper bounds as ZCOUNT takes them ("12": up to 12, "(12": below 12)
--   picks       space-separated triples "lo hi take": each shard's lowest `take` scores in [lo, hi]
--   entries     most scores the picks read in all
--   most_held   a shard holding more items is not read but named in `pending` (the calls' sizes assumed it)
-- Reply (reader.answer, CALLS.score_spread_shards): pending { position (1-based, in `shards`) of each
--   shard not read }; listed (summed over the shards read); min and max (the lowest and highest listed
--   score over them, "" when none lists one); counts { listed items up to each bound, summed };
--   picked { per pick { the scores read, ascending shard by shard } }; cut (1: `entries` may have left
--   a pick short of a shard's `take`); most (the most items a shard read holds)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)

-- The call's bounds parsed (count; numeric: every bound a number, else counts_by_scores is not used)
-- and a shard's scores, kept from call to call: a table allocated per bound costs Lua's collector
-- several times its making (board_write's LISTS).
local BOUNDS = { count = 0, numeric = true, texts = {}, values = {}, opens = {} }
local SCORES = {}

local function parse_bounds(text)
  local bounds = BOUNDS
  bounds.count, bounds.numeric = 0, true
  for word in string.gmatch(text, '%S+') do
    local b = bounds.count + 1
    local open = string.byte(word, 1) == 40 -- "(12": below 12
    local value = tonumber(open and string.sub(word, 2) or word)
    if value == nil or value ~= value then bounds.numeric = false end
    bounds.texts[b], bounds.values[b], bounds.opens[b], bounds.count = word, value, open, b
  end
  return bounds
end

-- A shard's listed items up to each bound, from its scores read whole (ascending) as ZCOUNT answers
-- them, when the shard holds no more items than bounds. One walk over the scores for ascending
-- bounds, from the first score again where a bound is lower than the one before (each quantile's
-- probes ascend: at most 6 walks then).
local function counts_by_scores(spread, top_key, low, bounds)
  local found = redis.call('ZRANGE', top_key, low, '+inf', 'BYSCORE', 'WITHSCORES')
  local scores, n = SCORES, #found / 2
  for i = 1, n do scores[i] = tonumber(found[2 * i]) end
  local values, opens, at, last = bounds.values, bounds.opens, 1, bounds.values[1]
  for b = 1, bounds.count do
    local value = values[b]
    if value < last then at = 1 end
    last = value
    -- Past the scores below the bound ("(v"), or up to it ("v").
    if opens[b] then
      while at <= n and scores[at] < value do at = at + 1 end
    else
      while at <= n and scores[at] <= value do at = at + 1 end
    end
    spread.counts[b] = spread.counts[b] + at - 1
  end
end

-- Adds one shard's part (score_spread's, its positions aside) to `spread`; false (not read) when it
-- holds more than `most_held` items.
local function add_shard(spread, top_key, bounds, most_held)
  local held = redis.call('ZCARD', top_key)
  if held > most_held then return false end
  spread.most = math.max(spread.most, held)
  local listed = order.listed_count(top_key)
  -- Items held but not listed (0 or less on a sum board) sit below the listed ones: a count starts above them.
  local low = held > listed and '(0' or '-inf'
  if held > 0 and held <= bounds.count and bounds.numeric then
    counts_by_scores(spread, top_key, low, bounds)
  else
    for b = 1, bounds.count do
      spread.counts[b] = spread.counts[b] + redis.call('ZCOUNT', top_key, low, bounds.texts[b])
    end
  end
  spread.listed = spread.listed + listed
  if listed == 0 then return true end
  local unlisted = held - listed
  local lowest = redis.call('ZRANGE', top_key, unlisted, unlisted, 'WITHSCORES')[2]
  local highest = redis.call('ZRANGE', top_key, -1, -1, 'WITHSCORES')[2]
  if spread.min == '' or tonumber(lowest) < tonumber(spread.min) then spread.min = lowest end
  if spread.max == '' or tonumber(highest) > tonumber(spread.max) then spread.max = highest end
  return true
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
  local bounds = parse_bounds(arg.bounds)
  local picks = parse_picks(arg.picks)
  local spread = { pending = {}, listed = 0, min = '', max = '', counts = {}, picked = {}, cut = 0, most = 0 }
  local most_held = tonumber(arg.most_held)
  spread.room = tonumber(arg.entries)
  for b = 1, bounds.count do spread.counts[b] = 0 end
  for p = 1, #picks do spread.picked[p] = {} end
  local err = board_write.visit_settled(arg.shards, header, { arg.window_key }, spread.pending, function(tops)
    if not add_shard(spread, tops[1], bounds, most_held) then return false end
    pick_shard(spread, tops[1], picks)
  end)
  if err then return err end
  return reader.answer(CALLS.score_spread_shards, spread)
end
