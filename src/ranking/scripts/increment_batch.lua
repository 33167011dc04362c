-- increment_batch: adds amounts to many items in every window of a board, in one atomic step.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+3(w-1)] .. ARGV[7+3(w-1)]: window w's period (s), interval (s), creation time (unix ms)
-- ARGV[5+3W] .. ARGV[8+3W]: idempotency key ("" for none), request fingerprint, context, retention (ms)
-- ARGV[9+3W]     new items the client may create (-1: no quota)
-- ARGV[10+3W ...] pairs of item id, amount (integer, non-zero)
-- Reply: { outcome, context, [new items created, due time for the index (unix ms, 0: none; see
--        due_to_index): applied only], draining (0|1), entries applied } (outcome, context and the
--        counts: see idem_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_BOARD_FULL, TB_QUOTA (see admit_items): the whole batch
--        is refused, nothing applied
local answer, now_ms, window_count, idem = begin_board_write(5)
if answer then return answer end
local now_sec = math.floor(now_ms / 1000)
cross_all(2, window_count, 5, 3, now_sec)
local draining = expire_all(2, window_count, 5, 3, now_sec, tonumber(ARGV[3]))
local first = 10 + 3 * window_count
local items = {}
for i = first, #ARGV, 2 do items[#items + 1] = ARGV[i] end
local created, refusal = admit_items(2, window_count, items, tonumber(ARGV[9 + 3 * window_count]))
if refusal then return redis.error_reply(refusal) end
bump_version(KEYS[1])
-- add_to_slot per entry, with the slot indexed once per window instead of once per entry.
local new_due_ms = nil
for w = 0, window_count - 1 do
  local slots_key, top_key = KEYS[2 + 2 * w], KEYS[3 + 2 * w]
  local slot_start = current_slot(now_sec, tonumber(ARGV[6 + 3 * w]))
  local slot_key = slot_key_of(slots_key, slot_start)
  if redis.call('ZADD', slots_key, 'NX', slot_start, slot_start) == 1 then
    new_due_ms = math.min(new_due_ms or math.huge, slot_due_ms(slot_start, tonumber(ARGV[5 + 3 * w])))
  end
  for i = first, #ARGV, 2 do add_to_slot(slot_key, top_key, ARGV[i], ARGV[i + 1]) end
end
local due_ms = due_to_index(2, window_count, with_snapshot_due(new_due_ms, 2, window_count, now_sec))
return idem_finish(KEYS[1], 'cfg', idem, now_ms, { draining, (#ARGV - first + 1) / 2 }, { created, due_ms })
