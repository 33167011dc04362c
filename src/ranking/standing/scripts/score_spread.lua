-- requires: order, reader, snapshot
-- score_spread: one shard's part of a window's score distribution, after expiry: its listed items
-- (order_lib's listed: every recorded score on max / min / last, above 0 on sum), their lowest and highest score, how many score up to each bound and the scores at
-- given ascending positions. Each count and position is O(log n) (ZCOUNT, ZRANGE by index): the
-- caller bounds how many one call asks (at most 99 bucket edges, or 6 x 8 probes: spread-math.ts).
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.score_spread): the header with the one window, then
--   bounds     space-separated upper bounds as ZCOUNT takes them ("12": up to 12, "(12": below 12)
--   positions  space-separated 0-based positions among the listed items, lowest score first
-- Reply (reader.answer, CALLS.score_spread): draining (0|1), listed, min and max (the listed items'
--   lowest and highest score; "" when none), counts { listed items up to each bound },
--   scores { the score at each position; "" past the last }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function score_spread(keys, args)
  local top_key = keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.score_spread)
  if refused then return refused end
  local listed = order.listed_count(top_key)
  -- Items held but not listed (0 or less on a sum board) sit below the listed ones: a listed position
  -- is offset by them, and a count starts above them.
  local unlisted = redis.call('ZCARD', top_key) - listed
  local low = unlisted > 0 and '(0' or '-inf'
  local counts, scores = {}, {}
  for bound in string.gmatch(arg.bounds, '%S+') do
    counts[#counts + 1] = redis.call('ZCOUNT', top_key, low, bound)
  end
  for position in string.gmatch(arg.positions, '%S+') do
    local at = unlisted + tonumber(position)
    scores[#scores + 1] = redis.call('ZRANGE', top_key, at, at, 'WITHSCORES')[2] or ''
  end
  local lowest = redis.call('ZRANGE', top_key, unlisted, unlisted, 'WITHSCORES')[2]
  local highest = redis.call('ZRANGE', top_key, -1, -1, 'WITHSCORES')[2]
  return reader.answer(CALLS.score_spread, {
    draining = draining,
    listed = listed,
    min = listed > 0 and lowest or '',
    max = listed > 0 and highest or '',
    counts = counts,
    scores = scores,
  })
end
