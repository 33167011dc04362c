-- requires: board_write, call_state, drains, order, reader, snapshot, window
-- count_above: for a sharded board, how many items of this shard score above given scores, per window,
-- after expiring what fell out (the other shards' share of a rank), its expired fields weighed as a write's
-- (drain_lib's call_drain).
-- Keys: cfg (the shard's config hash: holds the config version), then each window's (slots, top) pair
-- Args (reader.read_call, CALLS.count_above): the header with every window, then
--   scores   JSON array: the score of each window to count above (one not listed, a sum <= 0: count
--            nothing)
--   marks    JSON array: a tie mark for each window's score (a sharded `ties: first` board), or "": with
--            one, items of an equal score and an earlier mark count too (tie_ahead)
-- Reply (reader.answer, CALLS.count_above): draining (0|1), above { items ahead of the score (and
--   mark) in each window }, ranked { items listed in each window (order_lib) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function count_above(keys, args)
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.count_above)
  if refused then return refused end
  local window_count, now_sec = #header.windows, header.now_sec
  local windows = call_state.bind_windows(2, window_count)
  snapshot.cross_all(windows, now_sec)
  local draining = window.expire_all(windows, now_sec, header.budget, drains.call_drain(header.budget))
  local scores, marks = cjson.decode(arg.scores), cjson.decode(arg.marks)
  local above, ranked = {}, {}
  for w = 1, window_count do
    local top_key = keys[1 + 2 * w]
    above[w] = order.listed(top_key, scores[w]) and order.ahead(top_key, scores[w], marks[w] or '') or 0
    ranked[w] = order.listed_count(top_key)
  end
  return reader.answer(CALLS.count_above, { draining = draining, above = above, ranked = ranked })
end
