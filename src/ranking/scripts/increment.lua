-- increment: adds an amount to one item in every window of a board, expiring what fell out first.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+3(w-1)] .. ARGV[7+3(w-1)]: window w's period (s), interval (s), creation time (unix ms)
-- ARGV[5+3W]     item id
-- ARGV[6+3W]     amount (integer, non-zero)
-- ARGV[7+3W] .. ARGV[10+3W]: idempotency key ("" for none), request fingerprint, context, retention (ms)
-- ARGV[11+3W]    new items the client may create (0 or 1; -1: no quota)
-- Reply: { outcome, context, [new items created, due time for the index (unix ms, 0: none; see
--        due_to_index): applied only], draining (0|1), score_1, rank_1, ..., score_W, rank_W,
--        previous_rank_1, ..., previous_rank_W } (rank 0: not ranked; previous rank: in the window's
--        latest snapshot, 0 when absent; outcome, context and the counts as idem_lib says: a replay
--        answers the stored figures)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_BOARD_FULL, TB_QUOTA (see admit_items; nothing applied)
local answer, now_ms, window_count, idem = begin_board_write(7)
if answer then return answer end
local now_sec = math.floor(now_ms / 1000)
cross_all(2, window_count, 5, 3, now_sec)
local draining = expire_all(2, window_count, 5, 3, now_sec, tonumber(ARGV[3]))
local item = ARGV[5 + 3 * window_count]
local amount = tonumber(ARGV[6 + 3 * window_count])
local created, refusal = admit_items(2, window_count, { item }, tonumber(ARGV[11 + 3 * window_count]))
if refusal then return redis.error_reply(refusal) end
bump_version(KEYS[1])
local reply = { draining }
local new_due_ms = nil
for w = 0, window_count - 1 do
  local slots_key, top_key = KEYS[2 + 2 * w], KEYS[3 + 2 * w]
  local slot_start = current_slot(now_sec, tonumber(ARGV[6 + 3 * w]))
  local score, new_slot = add_to_window(slots_key, top_key, slot_start, item, amount)
  if new_slot then new_due_ms = math.min(new_due_ms or math.huge, slot_due_ms(slot_start, tonumber(ARGV[5 + 3 * w]))) end
  reply[#reply + 1] = score
  reply[#reply + 1] = rank_of(top_key, score)
end
for w = 0, window_count - 1 do reply[#reply + 1] = previous_rank(KEYS[3 + 2 * w], item) end
new_due_ms = with_snapshot_due(new_due_ms, 2, window_count, now_sec)
return idem_finish(KEYS[1], 'cfg', idem, now_ms, reply, { created, due_to_index(2, window_count, new_due_ms) })
