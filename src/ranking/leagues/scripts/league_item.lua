-- requires: board_write, leagues, reader, ties
-- league_item: an item's standing in its cohort of the current period: tier, cohort, rank (by the
-- board's ties: 1 + the members scoring more, or its strict place), league score and the cohort's
-- members. O(log n).
-- Keys: cfg (the board's config hash)
-- Args (reader.read_call, CALLS.league_item): the header (config version, now, no windows), then
--   item, period (the league window's current period start, unix s)
-- Reply (reader.answer, CALLS.league_item): placed (0: no event this period), tier, cohort, rank,
--   score (as Redis wrote it), members
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function league_item(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.league_item)
  if refused then return refused end
  local s = leagues.setting_of(cfg_key)
  local none = { placed = 0, tier = 0, cohort = 0, rank = 0, score = '0', members = 0 }
  if not s then return reader.answer(CALLS.league_item, none) end
  local p, t, c, mark = leagues.parse_at(redis.call('HGET', s.base .. 'at', arg.item))
  if p ~= tonumber(arg.period) then return reader.answer(CALLS.league_item, none) end
  local key = leagues.cohort_key(s, p, t, c)
  local score, rank = ties.marked_standing(key, mark .. arg.item, s.width)
  return reader.answer(CALLS.league_item, {
    placed = 1, tier = t, cohort = c, rank = rank, score = score, members = redis.call('ZCARD', key),
  })
end
