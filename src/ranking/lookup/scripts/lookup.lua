-- requires: board_write, item_data, order, previous, reader, snapshot, window
-- lookup: scores of given item ids in one window of one shard, and how many items of the shard score
-- above given scores, after expiry. An unsharded lookup is one call (ids, and counts above their own
-- scores); a sharded one asks each shard for the scores of the ids it holds, then every shard for the
-- counts above those scores (rank = 1 + the items above on every shard).
-- Keys: cfg (board config hash: holds the config version), slots (the window's slots index zset), top
--   (the window's results zset)
-- Args (reader.read_call, CALLS.lookup): the header with the one window, then
--   items         JSON array of item ids
--   with_data     1 to answer each id's data (item_data_lib), else 0
--   ahead_scores, ahead_marks   JSON arrays of the same length: a score to count above, and its tie
--                 mark (a sharded `ties: first` board: items of that score with an earlier mark count
--                 too; "": none)
-- Reply (reader.answer, CALLS.lookup):
--   draining (0|1); scores { of each id, 0: none }; ranks { of each id in this shard, 0: not ranked,
--   -1: held but left out of the listing (moderation) }; previous { rank of each id in the latest
--   snapshot, 0: absent or no snapshots }; data { of each id, false: none or not asked }; above
--   { items ahead of each (score, mark) given }; marks { tie mark of each id, "": none, or not a
--   sharded `ties: first` board }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function lookup(keys, args)
  local cfg_key, slots_key, top_key = keys[1], keys[2], keys[3]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.lookup)
  if refused then return refused end
  local rule, now_sec = header.windows[1], header.now_sec
  local keeps = snapshot.cross_window_of(cfg_key, slots_key, top_key, now_sec, rule.interval_sec, rule.origin_sec)
  local _, more = window.expire_window(slots_key, top_key, now_sec, rule.period_sec, rule.interval_sec, header.budget, rule.origin_sec)
  local items = cjson.decode(arg.items)
  local scores, ranks, held, data, above, marks = {}, {}, {}, {}, {}, {}
  for i, item in ipairs(items) do
    scores[i], ranks[i] = window.standing(top_key, item)
    held[2 * i - 1], held[2 * i] = item, scores[i]
    -- As a string: a group board's scores hold fractions, which an integer reply would truncate.
    scores[i] = string.format('%.17g', scores[i])
    if ranks[i] == 0 and order.left_out(top_key, item) then ranks[i] = -1 end
    data[i] = false
    marks[i] = order.mark_of(top_key, item)
  end
  -- Every id's previous rank from one ZMSCORE of the previous listing (or one read of it), not a ZSCORE each.
  local found, previous_ranks = previous.ranks_of(top_key, keeps, held), {}
  for i = 1, #items do previous_ranks[i] = found[i] or 0 end
  if arg.with_data == '1' and #items > 0 then data = item_data.item_data_of(cfg_key, items) end
  local ahead_marks = cjson.decode(arg.ahead_marks)
  for i, score in ipairs(cjson.decode(arg.ahead_scores)) do
    above[i] = order.listed(top_key, score) and order.ahead(top_key, score, ahead_marks[i]) or 0
  end
  return reader.answer(CALLS.lookup, {
    draining = more and 1 or 0, scores = scores, ranks = ranks, previous = previous_ranks, data = data, above = above,
    marks = marks,
  })
end
