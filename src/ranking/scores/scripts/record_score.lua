-- requires: aggregate, board_write, call_state, idempotency, order, slot_due, snapshot, window
-- record_score: records an item's score on a max / min / last board in every window whose live span holds
-- the event's slot, expiring what fell out first (aggregate_lib says how slots and windows keep it).
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version and the aggregate)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from (the caller checked the aggregate
--                against that version, so a sum board never gets here)
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields (and recomputing reads) of this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms),
--                origin (window_lib)
-- ARGV[5+4W] .. ARGV[8+4W]: idempotency key ("" for none), fingerprint, context (the window names),
--                retention (see idem_lib)
-- ARGV[9+4W]     new items the client may create (0 or 1; -1: no quota)
-- ARGV[10+4W]    item id
-- ARGV[11+4W]    score, a decimal integer (|score| <= 10^15); on a board with a tiebreak
--                "<score>,<tiebreak>" (aggregate_lib)
-- ARGV[12+4W]    the event's time, unix ms as a decimal integer, not after now
-- Reply: { outcome, context, [new items created, due time for the index (unix ms, 0: none): applied
--        only], draining (0|1), score_1, rank_1, ..., score_W, rank_W, previous_rank_1, ...,
--        previous_rank_W[, tie_mark_1, ..., tie_mark_W] }, as increment answers one request (strict
--        ranks on a `ties: first` board; the marks on a sharded `ties: first` board, and on a board
--        with a tiebreak, whose marks hold each window's tiebreak)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_AT_OUT_OF_SPAN (no window holds the event's slot),
--         TB_BOARD_FULL ..., TB_QUOTA ... (see admit_items); nothing applied

-- The running call's state (call_lib): the same tables for every call.
local BOARD = call_state.BOARD

local function record_score(keys, args)
  call_state.begin_call(keys, args)
  local answer, now_ms, window_count, idem = board_write.begin_board_write(5)
  if answer then return answer end
  local now_sec = math.floor(now_ms / 1000)
  local first = 9 + window.WINDOW_ARGS * window_count
  local item, score_arg, at_arg = ARGV[first + 1], ARGV[first + 2], ARGV[first + 3]
  local confs = snapshot.cross_all(2, window_count, 5, now_sec)
  local draining = window.expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  slot_due.settle_slot_due()
  local at_sec = math.floor(tonumber(at_arg) / 1000)
  local covering = window.window_holds(at_sec, now_sec, window_count)
  if not covering then return redis.error_reply('TB_AT_OUT_OF_SPAN no window holds the slot') end
  local created, refusal = board_write.admit_items(2, window_count, { item }, tonumber(ARGV[first]))
  if refusal then return redis.error_reply(refusal) end
  local reply, new_due_ms = { draining }, nil
  for w = 0, window_count - 1 do
    local slots_key, top_key = KEYS[2 + 2 * w], KEYS[3 + 2 * w]
    local held, rank
    if covering[w] then
      local period_sec, interval_sec, origin_sec = window.window_rule(5, w)
      local slot_start = window.current_slot(at_sec, interval_sec, origin_sec)
      local due_ms = slot_due.index_slot(slots_key, slot_start, period_sec)
      if due_ms then new_due_ms = math.min(new_due_ms or math.huge, due_ms) end
      held = aggregate.best_record(BOARD.aggregate, slots_key, top_key, slot_start, item, score_arg, at_arg, window.results_changed)
      rank = window.item_rank(top_key, item, held)
    else
      -- A window the event is too old for: the item's standing there (rank 0 when it holds none, which
      -- a 0 score would otherwise rank on a board listing every sign).
      held, rank = window.standing(top_key, item)
    end
    reply[#reply + 1] = held
    reply[#reply + 1] = rank
  end
  local keeping = snapshot.snapshot_windows(2, window_count, confs)
  for w = 0, window_count - 1 do
    reply[#reply + 1] = keeping and keeping[w] and snapshot.previous_rank(KEYS[3 + 2 * w], item) or 0
  end
  order.append_marks(reply, KEYS, 3, window_count, item)
  new_due_ms = snapshot.with_snapshot_due(new_due_ms, 2, window_count, now_sec)
  snapshot.bump_version(KEYS[1], 1)
  return idempotency.idem_finish(KEYS[1], 'cfg', idem, now_ms, reply, { created, window.due_to_index(2, window_count, new_due_ms) })
end
