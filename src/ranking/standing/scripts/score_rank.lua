-- requires: order, reader, snapshot
-- score_rank: how many listed items of one shard's window a record of a given score would have ahead
-- of it, written now, after expiry; O(log n): two ZCOUNTs.
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.score_rank): the header with the one window, then score (a number as
--   JavaScript writes it) and level ("1": items holding that score are ahead too, a `ties: first`
--   board, where they reached it first; "0": only items scoring higher) and mark (on a board with a
--   tiebreak the record's tiebreak mark, tiebreak_lib: items of an equal score and a greater mark are
--   ahead too; "": none)
-- Reply (reader.answer, CALLS.score_rank): draining (0|1), counted (0|1: the window would list a record
--   of that score: order_lib's listed), ahead (items ahead of the record in the board's order), listed
--   (items the window lists)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function score_rank(keys, args)
  local top_key = keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.score_rank)
  if refused then return refused end
  local edge = arg.level == '1' and arg.score or '(' .. arg.score
  local ahead
  if arg.mark ~= '' then
    ahead = order.base_ahead(top_key, tonumber(arg.score), arg.mark)
  elseif order.ascending(top_key) then
    ahead = redis.call('ZCOUNT', top_key, '-inf', edge)
  else
    ahead = redis.call('ZCOUNT', top_key, edge, '+inf')
  end
  return reader.answer(CALLS.score_rank, {
    draining = draining,
    counted = order.listed(top_key, tonumber(arg.score)) and 1 or 0,
    ahead = order.shown_ahead(top_key, ahead),
    listed = order.listed_count(top_key),
  })
end
