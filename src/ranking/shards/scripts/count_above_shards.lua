-- requires: call_state, keyspace, order, reader, window
-- count_above_shards: count_above summed over several shards of a sharded board that live on this Redis
-- node, in one call instead of one per shard (the other shards' share of a write's or an item's rank).
-- One of the scripts that read keys of several hash tags: the shards' config keys come as an argument,
-- and the allow-cross-slot-keys flag (Redis >= 7.0) lets it read keys of any slot this node serves. On a
-- Cluster the caller groups shards by node; a key this node does not serve fails the call ("non local
-- key"), and the caller then counts shard by shard. Read-only (no-writes): a window whose every slot
-- expired holds nothing live and counts nothing, drained or not; a shard with expired slots not yet
-- drained in a window still holding live ones is named in the reply and not counted here, for the
-- caller to count with count_above, which drains it first, or (`as_they_stand`: a write's rank past
-- its drains, issue #45) counted here with its expired data.
-- Keys: route (the config hash of the first shard in `shards`: routes the call to the node serving it)
-- Args (reader.read_call, CALLS.count_above_shards): the header with the windows counted (no budget), then
--   window_keys  JSON array: each window's key name (a segment's: <window>~<segment>)
--   scores       JSON array: the score of each window to count above (<= 0: count nothing)
--   marks        JSON array: a tie mark for each window's score, or "" (as count_above)
--   shards       JSON array: the config hash of each shard to count
--   ranked       1 to count each window's listed items too, else 0 (a write's rank needs only those above:
--                one command less per shard and window)
--   as_they_stand  1 to count a shard with expired slots to drain as it stands too, else 0
-- Reply (reader.answer, CALLS.count_above_shards): pending { position (1-based, in `shards`) of each
--   shard with expired slots to drain: not counted, or counted as it stands }, above { per window,
--   summed over the counted shards }, ranked { likewise; 0 when not asked }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (of any shard)

-- The results key of each window of the shard of `cfg_key` (`window_keys`, `rules`: the call's), false
-- for a window whose every slot expired, and whether a window with live slots holds expired ones not
-- yet drained: at the first such window, unless `as_they_stand` (the shard is then not counted). The
-- cutoff is exclusive, as expire_window's (board_write.settled_tops).
local function counted_tops(cfg_key, window_keys, rules, now_sec, as_they_stand)
  local tops, stale = {}, false
  for w, rule in ipairs(rules) do
    local live_from = window.live_from_sec(now_sec, rule.period_sec, rule.interval_sec, rule.origin_sec)
    local base = keyspace.sibling_key(cfg_key, 'cfg', window_keys[w] .. ':')
    local slots = base .. 'slots'
    tops[w] = base .. 'top'
    if #redis.call('ZRANGE', slots, '-inf', '(' .. live_from, 'BYSCORE', 'LIMIT', 0, 1) > 0 then
      local live = #redis.call('ZRANGE', slots, live_from, '+inf', 'BYSCORE', 'LIMIT', 0, 1) > 0
      if live and not as_they_stand then return tops, true end
      if live then stale = true else tops[w] = false end
    end
  end
  return tops, stale
end

local function count_above_shards(keys, args)
  local route = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.count_above_shards)
  local window_keys, scores, marks = cjson.decode(arg.window_keys), cjson.decode(arg.scores), cjson.decode(arg.marks)
  local above, ranked, pending, with_ranked = {}, {}, {}, arg.ranked == '1'
  local as_they_stand = arg.as_they_stand == '1'
  for w = 1, #header.windows do
    above[w], ranked[w] = 0, 0
  end
  for s, cfg_key in ipairs(cjson.decode(arg.shards)) do
    local err = window.version_error(cfg_key, header.version)
    if err then return redis.error_reply(err) end
    local tops, stale = counted_tops(cfg_key, window_keys, header.windows, header.now_sec, as_they_stand)
    if stale then pending[#pending + 1] = s end
    for w = 1, (as_they_stand or not stale) and #tops or 0 do
      local top = tops[w]
      if top and order.listed(top, scores[w]) then above[w] = above[w] + order.ahead(top, scores[w], marks[w]) end
      if top and with_ranked then ranked[w] = ranked[w] + order.listed_count(top) end
    end
  end
  return reader.answer(CALLS.count_above_shards, { pending = pending, above = above, ranked = ranked })
end
