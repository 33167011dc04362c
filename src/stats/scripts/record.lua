-- requires: idempotency, stats
-- record: adds one value to the hour of a stats context/type, rolling the hour over first if needed.
-- KEYS: 2
-- KEYS[1]        the current hour's hash {<prefix>stats:<escaped context>:<type>}:cur
-- KEYS[2]        the previous hour's hash ({...}:prev)
-- ARGV[1]        now, unix milliseconds (only for the keys' time to live)
-- ARGV[2]        hour start of the sample, unix seconds (from the caller's clock)
-- ARGV[3]        the value (finite number)
-- ARGV[4]        its histogram field: z, p<i> or n<i> (DDSketch bucket index, computed by the app)
-- ARGV[5] .. ARGV[8]: idempotency key ("" for none), request fingerprint, context, retention (ms) (idem_lib)
-- ARGV[9]        1 to record; 0 to answer only a stored answer of the key (a write the index refused for
--                growth may be the retry of one already recorded: it gets the first answer)
-- Reply: { outcome, context, status (1 current, 2 previous: the stored hour is already later, 0 dropped:
--          too old), count, sum, sumsq (strings) of the hour the value went into (none when dropped) }
--        (outcome and context: see idem_lib)
-- Errors: TB_NOT_STORED (ARGV[9] 0 and no stored answer: nothing recorded)
local function record(keys, args)
  local now_ms = tonumber(args[1])
  local now_sec = math.floor(now_ms / 1000)
  local hour = tonumber(args[2])
  local idem = idempotency.idem_of(args[5], '', args[6], args[7], args[8])
  local replay = idempotency.idem_begin(keys[1], 'cur', idem, now_ms)
  if replay then return replay end
  if args[9] == '0' then return redis.error_reply('TB_NOT_STORED no stored answer for this key') end
  local key, status = stats.target_hash(keys[1], keys[2], hour, now_sec)
  if key == nil then return idempotency.idem_finish(keys[1], 'cur', idem, now_ms, { 0 }) end
  local v = tonumber(args[3])
  local figures = stats.merge_into(key, hour, now_sec, 1, v, v * v, v, v, v, 0, args, #args + 1)
  redis.call('HINCRBY', key, args[4], 1)
  return idempotency.idem_finish(keys[1], 'cur', idem, now_ms, { status, figures[1], figures[2], figures[3] })
end
