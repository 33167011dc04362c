-- requires: board_write, leagues, reader
-- league_roll: one bounded step of the rollover of the board's oldest closed period with placements
-- not rolled (leagues_lib's roll_step: about `budget` units from the cursor on, a cohort in parts,
-- the cursor and each member's move stored in the same call). Safe to repeat, race and resume.
-- Keys: cfg (the board's config hash)
-- Args (reader.read_call, CALLS.league_roll): the header (config version, now, no windows), then
--   current (the league window's current period start, unix s: periods before it are closed),
--   budget (units to roll in this call, about: a member one, a part part_units more), part_units
-- Reply (reader.answer, CALLS.league_roll): done (1: no closed period is left to roll)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function league_roll(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.league_roll)
  if refused then return refused end
  local s = leagues.setting_of(cfg_key)
  if not s then return reader.answer(CALLS.league_roll, { done = 1 }) end
  local oldest = redis.call('ZRANGE', s.base .. 'open', '-inf', '(' .. arg.current, 'BYSCORE', 'LIMIT', 0, 1)[1]
  if not oldest then return reader.answer(CALLS.league_roll, { done = 1 }) end
  leagues.roll_step(s, tonumber(oldest), tonumber(arg.budget), tonumber(arg.part_units))
  local left = redis.call('ZCOUNT', s.base .. 'open', '-inf', '(' .. arg.current)
  return reader.answer(CALLS.league_roll, { done = left == 0 and 1 or 0 })
end
