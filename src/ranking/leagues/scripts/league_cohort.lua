-- requires: board_write, leagues, reader, ties
-- league_cohort: a page of one cohort of the current period, best first, ranked by the board's ties
-- (ties.marked_page: shared, equal scores share one competition rank; first, strict places). O(log n +
-- rows): at most one count, for the first row.
-- Keys: cfg (the board's config hash)
-- Args (reader.read_call, CALLS.league_cohort): the header (config version, now, no windows), then
--   period (the current period start, unix s), tier, cohort, offset, limit
-- Reply (reader.answer, CALLS.league_cohort): rows (item_1, score_1, rank_1, ...), members
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function league_cohort(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.league_cohort)
  if refused then return refused end
  local s = leagues.setting_of(cfg_key)
  if not s then return reader.answer(CALLS.league_cohort, { rows = {}, members = 0 }) end
  local key = leagues.cohort_key(s, arg.period, arg.tier, arg.cohort)
  local page, ranks = ties.marked_page(key, tonumber(arg.offset), tonumber(arg.limit), s.width)
  local rows = {}
  for n = 1, #ranks do rows[3 * n - 2], rows[3 * n - 1], rows[3 * n] = page[2 * n - 1], page[2 * n], ranks[n] end
  return reader.answer(CALLS.league_cohort, { rows = rows, members = redis.call('ZCARD', key) })
end
