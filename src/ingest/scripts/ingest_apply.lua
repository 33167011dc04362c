-- ingest_apply: applies the events of one stream batch that land on one board shard, and records in
-- the same call how far the source got on this shard, so a message delivered again is recognised.
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
-- ARGV[6+4W ...] quadruples of message id, item, amount (integer, non-zero), event time (unix ms),
--                ids ascending
-- Reply: { draining (0|1), due time for the index (unix ms, 0: none), events applied now, then one
--        outcome per entry: "a" applied now, "s" applied before, "r:<reason>" refused (now or before:
--        dead-letter it; AGGREGATE_MISMATCH on a max / min / last board, AT_OUT_OF_SPAN, BOARD_FULL) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (nothing applied), TB_INGEST_FENCED <epoch> (nothing applied)

-- Message ids "<hi>-<lo>" as two numbers (exact up to 2^53: stream ids' milliseconds and sequences are).
local function id_of(text)
  local hi, lo = string.match(text, '^(%d+)-(%d+)$')
  return tonumber(hi), tonumber(lo)
end

local function after(a_hi, a_lo, b_hi, b_lo)
  return a_hi > b_hi or (a_hi == b_hi and a_lo > b_lo)
end

-- Growth on this shard: new items are admitted in order until the board's cap (see board_write_lib).
-- Answers admit(item): whether the item may be written (true for an item the shard already holds).
local function ingest_admitter(window_count)
  local cap = item_cap(KEYS[1])
  local held = 0
  if cap > 0 then
    for w = 0, window_count - 1 do held = math.max(held, redis.call('ZCARD', KEYS[3 + 2 * w])) end
  end
  local admitted = {}
  return function(item)
    if cap == 0 or admitted[item] then return true end
    if new_items(2, window_count, { item }) == 0 then
      admitted[item] = true
      return true
    end
    if held + 1 > cap then return false end
    held = held + 1
    admitted[item] = true
    return true
  end
end

-- Sorts the entries into outcomes ("s" seen before, "r:<reason>" refused, recorded now, "a" to apply)
-- and answers them, the arg positions of the entries to apply, the windows holding each event second
-- and the highest new message id (nil: none). `last`: the progress hash's last id.
local function ingest_classify(progress, last, now_sec, window_count)
  local last_hi, last_lo = id_of(last)
  local admit = ingest_admitter(window_count)
  local outcomes, accepted, holding_at = {}, {}, {}
  local new_last = nil
  for i = 6 + WINDOW_ARGS * window_count, #ARGV, 4 do
    local id = ARGV[i]
    local hi, lo = id_of(id)
    if not after(hi, lo, last_hi, last_lo) then
      local refused = redis.call('HGET', progress, 'r:' .. id)
      outcomes[#outcomes + 1] = refused and ('r:' .. refused) or 's'
    else
      new_last = id
      local at_sec = math.floor(tonumber(ARGV[i + 3]) / 1000)
      if holding_at[at_sec] == nil then holding_at[at_sec] = window_holds(at_sec, now_sec, window_count) or false end
      local reason = nil
      -- A stream event adds an amount: a max / min / last board takes only scores (POST .../score).
      if BOARD.aggregate ~= 'sum' then
        reason = 'AGGREGATE_MISMATCH'
      elseif not holding_at[at_sec] then
        reason = 'AT_OUT_OF_SPAN'
      elseif not admit(ARGV[i + 1]) then
        reason = 'BOARD_FULL'
      end
      if reason then
        redis.call('HSET', progress, 'r:' .. id, reason)
        outcomes[#outcomes + 1] = 'r:' .. reason
      else
        accepted[#accepted + 1] = i
        outcomes[#outcomes + 1] = 'a'
      end
    end
  end
  return outcomes, accepted, holding_at, new_last
end

-- Adds the accepted entries (their arg positions) to the windows holding them; answers the earliest
-- due time of a slot this created, or nil.
local function ingest_add(accepted, holding_at, window_count)
  local new_due_ms = nil
  for w = 0, window_count - 1 do
    local slots_key, top_key = KEYS[2 + 2 * w], KEYS[3 + 2 * w]
    local period_sec, interval_sec, origin_sec = window_rule(5, w)
    local indexed = {}
    for _, i in ipairs(accepted) do
      local at_ms = tonumber(ARGV[i + 3])
      local at_sec = math.floor(at_ms / 1000)
      if holding_at[at_sec][w] then
        local slot_start = current_slot(at_sec, interval_sec, origin_sec)

        local due = add_batch_entry(slots_key, top_key, indexed, slot_start, period_sec, ARGV[i + 1], tonumber(ARGV[i + 2]), at_ms / 1000)
        if due then new_due_ms = math.min(new_due_ms or math.huge, due) end
      end
    end
  end
  return new_due_ms
end

local function ingest_apply(keys, args)
  begin_call(keys, args)
  local err = version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_ms = tonumber(ARGV[2])
  local window_count = tonumber(ARGV[4])
  local progress = KEYS[2 * window_count + 2]
  local epoch = tonumber(ARGV[5 + WINDOW_ARGS * window_count])
  local stored = redis.call('HMGET', progress, 'last', 'epoch')
  if stored[2] and tonumber(stored[2]) > epoch then return redis.error_reply('TB_INGEST_FENCED ' .. stored[2]) end
  local now_sec = math.floor(now_ms / 1000)
  cross_all(2, window_count, 5, now_sec)
  local draining = expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  local outcomes, accepted, holding_at, new_last = ingest_classify(progress, stored[1] or '0-0', now_sec, window_count)
  local new_due_ms = nil
  if #accepted > 0 then
    bump_version(KEYS[1])
    new_due_ms = ingest_add(accepted, holding_at, window_count)
    redis.call('HINCRBY', progress, 'applied', #accepted)
  end
  if new_last then redis.call('HSET', progress, 'last', new_last) end
  if not stored[2] or tonumber(stored[2]) < epoch then redis.call('HSET', progress, 'epoch', epoch) end
  local due_ms = due_to_index(2, window_count, with_snapshot_due(new_due_ms, 2, window_count, now_sec))
  local reply = { draining, due_ms, #accepted }
  for _, outcome in ipairs(outcomes) do reply[#reply + 1] = outcome end
  return reply
end
