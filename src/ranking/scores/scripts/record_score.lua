-- requires: aggregate, board_write, call_state, idempotency, order, previous, prune, reader, slot_due, snapshot, window, window_event
-- record_score: records an item's score on a max / min / last board in every window whose live span holds
-- the event's slot, expiring what fell out first (aggregate_lib says how slots and windows keep it).
-- Keys: cfg (the board config hash: holds the config version and the aggregate), then per window
--       slots (its slots index zset) and top (its results zset)
-- Args (reader.read_call, CALLS.record_score): the board header (the caller checked the aggregate
--       against its version, so a sum board never gets here), then idem_lib's idem_key,
--       idem_fingerprint, idem_context (the window names), idem_retention; new_items (the new items the
--       client may create: 0 or 1; -1: no quota); item; score (a decimal integer, |score| <= 10^15; on a
--       board with a tiebreak "<score>,<tiebreak>", aggregate_lib); at_ms (the event's time, unix ms as
--       a decimal integer, not after now)
-- Reply (reader.answer, CALLS.record_score, after idem_lib's outcome, context and, applied only, new
--       items created and the due time for the index, unix ms, 0: none): draining (0|1), scores,
--       ranks, previous_ranks, marks as increment answers one request (board_write.standing_fields;
--       strict ranks on a `ties: first` board; the marks on a sharded `ties: first` board, and on a
--       board with a tiebreak, whose marks hold each window's tiebreak)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_AT_OUT_OF_SPAN (no window holds the event's slot),
--         TB_BOARD_FULL ..., TB_QUOTA ... (see admit_items); nothing applied

local function record_score(keys, args)
  local cfg_key = keys[1]
  local answer, header, arg, idem = board_write.begin_board_write(keys, args, CALLS.record_score)
  if answer then return answer end
  local now_ms, now_sec, window_count = header.now_ms, header.now_sec, #header.windows
  local windows = call_state.bind_windows(2, window_count)
  local item, score_arg, at_arg = arg.item, arg.score, arg.at_ms
  local confs, draining = snapshot.open_write(windows, header)
  local at_sec = math.floor(tonumber(at_arg) / 1000)
  local covering = window.window_holds(at_sec, now_sec, windows)
  if not covering then return redis.error_reply('TB_AT_OUT_OF_SPAN no window holds the slot') end
  prune.settle(cfg_key, item)
  local created, refusal = board_write.admit_items(windows, { item }, tonumber(arg.new_items))
  if refusal then return redis.error_reply(refusal) end
  local flat = {}
  local new_due_ms = window_event.standings_after(flat, keys, 2, header, item, at_sec, covering,
    function(slots_key, top_key, slot_start, rule)
      local due_ms = slot_due.index_slot(slots_key, slot_start, rule.period_sec)
      local mode = aggregate.mode()
      return aggregate.best_record(mode, slots_key, top_key, slot_start, item, score_arg, at_arg, window.results_changed), due_ms
    end)
  local keeping = snapshot.snapshot_windows(windows, confs)
  for w = 0, window_count - 1 do
    flat[#flat + 1] = keeping and keeping[w] and previous.rank_of(keys[3 + 2 * w], item) or 0
  end
  order.append_marks(flat, keys, 3, window_count, item)
  new_due_ms = snapshot.with_snapshot_due(new_due_ms, windows, now_sec)
  snapshot.bump_version(cfg_key, 1)
  local scores, ranks, previous_ranks, marks = board_write.standing_fields(flat, 1, window_count)
  local reply = reader.answer(CALLS.record_score, { draining = draining, scores = scores, ranks = ranks,
    previous_ranks = previous_ranks, marks = marks })
  local made = { items = created, due_ms = slot_due.due_to_index(windows, new_due_ms) }
  return idempotency.idem_finish(cfg_key, 'cfg', idem, now_ms, reply, reader.record_of(CALLS.record_score.created, made, {}))
end
