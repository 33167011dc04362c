-- requires: call_state, ingest, slot_due, snapshot, window
-- ingest_apply: applies the events of one stream batch that land on one board shard, entry by entry,
-- and records in the same call how far the source got on this shard, so a message delivered again is
-- recognised. The general path: redeliveries, refusals, max / min / last boards (ingest_groups is the
-- fast path of a fresh batch on a sum board and hands everything else to this one).
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- KEYS[2W+2]     the source's progress hash on this shard (same hash tag):
--                  last     the highest message id applied here ("<hi>-<lo>": stream id; JetStream: "<seq>-0")
--                  epoch    the highest lease epoch of the source's consumer seen here
--                  applied  events applied here, all time
--                  r:<id>   why message <id> was refused here, until its dead letter is written
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     the caller's lease epoch: a lower one than recorded is refused (a consumer that lost
--                its lease to another instance must not write behind the new holder's back)
-- ARGV[6+4W]     segments.max, most live segments on this shard (0: the board takes none)
-- ARGV[7+4W ...] sextuples of message id, item, amount (integer, non-zero), event time (unix ms),
--                segments (joined by commas, "" for none), actor ("" for none; ACTORS.split; kept as an HTTP
--                increment's, actor_lib), ids ascending
-- Reply: { draining (0|1), due time for the index (unix ms, 0: none), events applied now, then one
--        outcome per entry: "a" applied now, "s" applied before, "r:<reason>" refused (now or before:
--        dead-letter it; AGGREGATE_MISMATCH on a max / min / last board, AT_OUT_OF_SPAN,
--        RETRACTED <actor|item> <until ms> (blocked, see ACTORS.refusal), SEGMENT_LIMIT, BOARD_FULL) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (nothing applied), TB_INGEST_FENCED <epoch> (nothing applied)

-- The running call's state (call_lib): the same tables for every call.
local BOARD = call_state.BOARD

-- The helpers (checks, the write, the progress) are ingest_lib's, shared with ingest_groups.

-- Sorts the entries into outcomes ("s" seen before, "r:<reason>" refused, recorded now, "a" to apply)
-- and answers them, the arg positions of the entries to apply and the highest new message id (nil: none).
local function ingest_classify(call, checks, first)
  local last_hi, last_lo = ingest.id_of(call.last)
  local outcomes, accepted = {}, {}
  local new_last = nil
  for i = first, #ARGV, 6 do
    local id = ARGV[i]
    local hi, lo = ingest.id_of(id)
    if not ingest.after(hi, lo, last_hi, last_lo) then
      local refused = redis.call('HGET', call.progress, 'r:' .. id)
      outcomes[#outcomes + 1] = refused and ('r:' .. refused) or 's'
    else
      new_last = id
      -- A stream event adds an amount: a max / min / last board takes only scores (POST .../score).
      local reason = BOARD.aggregate ~= 'sum' and 'AGGREGATE_MISMATCH' or ingest.ingest_check(checks, i)
      if reason then
        redis.call('HSET', call.progress, 'r:' .. id, reason)
        outcomes[#outcomes + 1] = 'r:' .. reason
      else
        accepted[#accepted + 1] = i
        outcomes[#outcomes + 1] = 'a'
      end
    end
  end
  return outcomes, accepted, new_last
end

local function ingest_apply(keys, args)
  call_state.begin_call(keys, args)
  local err, call = ingest.ingest_begin()
  if err then return err end
  local window_count = call.window_count
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  snapshot.cross_all(2, window_count, 5, now_sec)
  local draining = window.expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  slot_due.settle_slot_due()
  local checks = ingest.ingest_checks(now_sec, window_count, tonumber(ARGV[6 + window.WINDOW_ARGS * window_count]))
  local outcomes, accepted, new_last = ingest_classify(call, checks, 7 + window.WINDOW_ARGS * window_count)
  local due_ms = ingest.ingest_write(call, accepted, #accepted, checks.holding_at, new_last, now_sec)
  local reply = { draining, due_ms, #accepted }
  for _, outcome in ipairs(outcomes) do reply[#reply + 1] = outcome end
  return reply
end
