-- requires: call_state, leagues, reader, window
-- league_moves: a page of the moves of a closed period's rollover, in the order rolled. When the page
-- reaches past the moves listed so far and the rollover is not done, the call runs one bounded rollover
-- step (leagues_lib's roll_step) instead, and answers no rows (`rolled` 1): the caller asks again, so a
-- read completes the rollover lazily and no call both rolls and reads a page.
-- Keys: cfg (the board's config hash)
-- Args (reader.read_call, CALLS.league_moves): the header (config version, now, no windows), then
--   period (its start, unix s), current (the current period's start: a period before it is closed),
--   offset, limit, budget (members a step rolls)
-- Reply (reader.answer, CALLS.league_moves): done (1: the rollover is complete), rolled (1: this call
--   rolled a step and read no rows), listed (moves so far), rows (item_1, fromTier_1, toTier_1,
--   cohort_1, rank_1, ...)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function league_moves(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key = keys[1]
  local header, arg = reader.read_call(args, CALLS.league_moves)
  local err = window.version_error(cfg_key, header.version)
  if err then return redis.error_reply(err) end
  local s = leagues.setting_of(cfg_key)
  if not s then return reader.answer(CALLS.league_moves, { done = 1, rolled = 0, listed = 0, rows = {} }) end
  local key = s.base .. arg.period .. ':moves'
  local offset, limit = tonumber(arg.offset), tonumber(arg.limit)
  local period = tonumber(arg.period)
  local closed = period < tonumber(arg.current)
  if closed and redis.call('LLEN', key) < offset + limit and not leagues.roll_step(s, period, 0) then
    local done = leagues.roll_step(s, period, tonumber(arg.budget))
    return reader.answer(CALLS.league_moves, { done = done and 1 or 0, rolled = 1, listed = redis.call('LLEN', key), rows = {} })
  end
  local rows = {}
  for _, move in ipairs(redis.call('LRANGE', key, offset, offset + limit - 1)) do
    local item, from, to, cohort, rank = string.match(move, '^(.*)\31(%d+)\31(%d+)\31(%d+)\31(%d+)$')
    for _, field in ipairs({ item, tonumber(from), tonumber(to), tonumber(cohort), tonumber(rank) }) do rows[#rows + 1] = field end
  end
  local done = closed and leagues.roll_step(s, period, 0)
  return reader.answer(CALLS.league_moves, { done = done and 1 or 0, rolled = 0, listed = redis.call('LLEN', key), rows = rows })
end
