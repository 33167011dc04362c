-- requires: board_write, leagues, reader
-- league_moves: a page of the moves of a closed period's rollover, in the order rolled. When the page
-- reaches past the moves listed so far and the rollover is not done, the call first runs one bounded
-- rollover step (leagues_lib's roll_step, `rolled` 1), then reads only the rows the units the step left
-- pay for (`rows_per_unit` a unit), so a rolling call stays about one step's work and a shard whose
-- rollover fits one step is rolled and read in one call; the caller asks again from where the rows end.
-- Keys: cfg (the board's config hash)
-- Args (reader.read_call, CALLS.league_moves): the header (config version, now, no windows), then
--   period (its start, unix s), current (the current period's start: a period before it is closed),
--   offset, limit, budget (units a step rolls), part_units (the units of a cohort's part), rows_per_unit
--   (rows a unit the step left reads)
-- Reply (reader.answer, CALLS.league_moves): done (1: the rollover is complete), rolled (1: this call
--   rolled a step), listed (moves so far), rows (item_1, fromTier_1, toTier_1, cohort_1, rank_1, ...)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function league_moves(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.league_moves)
  if refused then return refused end
  local s = leagues.setting_of(cfg_key)
  if not s then return reader.answer(CALLS.league_moves, { done = 1, rolled = 0, listed = 0, rows = {} }) end
  local key = s.base .. arg.period .. ':moves'
  local offset, limit = tonumber(arg.offset), tonumber(arg.limit)
  local period = tonumber(arg.period)
  local closed = period < tonumber(arg.current)
  local done = closed and leagues.roll_step(s, period, 0, 0)
  local rolled = closed and not done and redis.call('LLEN', key) < offset + limit
  if rolled then
    local left
    done, left = leagues.roll_step(s, period, tonumber(arg.budget), tonumber(arg.part_units))
    limit = math.min(limit, math.max(0, left) * tonumber(arg.rows_per_unit))
  end
  local rows = {}
  local page = limit > 0 and redis.call('LRANGE', key, offset, offset + limit - 1) or {}
  for _, move in ipairs(page) do
    local item, from, to, cohort, rank = string.match(move, '^(.*)\31(%d+)\31(%d+)\31(%d+)\31(%d+)$')
    for _, field in ipairs({ item, tonumber(from), tonumber(to), tonumber(cohort), tonumber(rank) }) do rows[#rows + 1] = field end
  end
  return reader.answer(CALLS.league_moves, {
    done = done and 1 or 0, rolled = rolled and 1 or 0, listed = redis.call('LLEN', key), rows = rows,
  })
end
