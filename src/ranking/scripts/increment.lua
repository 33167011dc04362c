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
-- ARGV[12+3W]    the event's time, unix ms (not after now): it lands in the slot of that time in every
--                window whose live span still holds that slot (and only those)
-- ARGV[13+3W]    the item's creation time, unix ms, or "" for none: a hot view's firstSeen is the
--                earliest of the item's event times and creation times
-- Reply: { outcome, context, [new items created, due time for the index (unix ms, 0: none; see
--        due_to_index): applied only], draining (0|1), score_1, rank_1, ..., score_W, rank_W } (rank 0:
--        not ranked; outcome, context and the counts as idem_lib says: a replay answers the stored figures)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_BOARD_FULL, TB_QUOTA (see admit_items), TB_AT_OUT_OF_SPAN (no
--        window holds the event's slot any more) (nothing applied)
local answer, now_ms, window_count, idem = begin_board_write(7)
if answer then return answer end
local now_sec = math.floor(now_ms / 1000)
local draining = expire_all(2, window_count, 5, 3, now_sec, tonumber(ARGV[3]))
local item = ARGV[5 + 3 * window_count]
local amount = tonumber(ARGV[6 + 3 * window_count])
local at_ms = tonumber(ARGV[12 + 3 * window_count])
local at_sec = math.floor(at_ms / 1000)
local seen_sec = math.min(at_ms, tonumber(ARGV[13 + 3 * window_count]) or math.huge) / 1000
local covering = window_holds(at_sec, now_sec, window_count)
if not covering then return redis.error_reply('TB_AT_OUT_OF_SPAN no window holds the slot') end
local created, refusal = admit_items(2, window_count, { item }, tonumber(ARGV[11 + 3 * window_count]))
if refusal then return redis.error_reply(refusal) end
local reply = { draining }
local new_due_ms = nil
for w = 0, window_count - 1 do
  local slots_key, top_key = KEYS[2 + 2 * w], KEYS[3 + 2 * w]
  local score
  if covering[w] then
    local slot_start = current_slot(at_sec, tonumber(ARGV[6 + 3 * w]))
    local new_slot
    score, new_slot = add_event(slots_key, top_key, slot_start, item, amount, seen_sec)
    if new_slot then new_due_ms = math.min(new_due_ms or math.huge, slot_due_ms(slot_start, tonumber(ARGV[5 + 3 * w]))) end
  else
    score = standing(top_key, item)
  end
  reply[#reply + 1] = score
  reply[#reply + 1] = rank_of(top_key, score)
end
return idem_finish(KEYS[1], 'cfg', idem, now_ms, reply, { created, due_to_index(2, window_count, new_due_ms) })
