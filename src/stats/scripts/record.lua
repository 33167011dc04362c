-- requires: idempotency, reader, stats
-- record: adds one value to the hour of a stats context/type, rolling the hour over first if needed.
-- Keys: current (the current hour's hash {<prefix>stats:<escaped context>:<type>}:cur), previous (the
--   previous hour's hash, {...}:prev)
-- Args (reader.read_call, CALLS.record): the header (no version, now: only for the keys' time to live,
--   no windows), then
--   hour_start       hour start of the sample, unix seconds (from the caller's clock)
--   value            the value (finite number)
--   histogram_field  its histogram field: z, p<i> or n<i> (DDSketch bucket index, computed by the app)
--   idem_key, idem_fingerprint, idem_context, idem_retention   idem_lib's (idem_key "": none)
--   apply            1 to record; 0 to answer only a stored answer of the key (a write the index
--                    refused for growth may be the retry of one already recorded: it gets the first answer)
-- Reply (reader.answer, CALLS.record, after idem_lib's outcome and context): status (1 current, 2
--   previous: the stored hour is already later, 0 dropped: too old), count, sum, sumsq (strings) of the
--   hour the value went into (0 each when dropped)
-- Errors: TB_NOT_STORED (apply 0 and no stored answer: nothing recorded)

-- A recorded value adds no histogram pairs of a batch: its own field is counted after the merge.
local NO_HISTOGRAM = {}

local function record(keys, args)
  local current_key, previous_key = keys[1], keys[2]
  local header, arg = reader.read_call(args, CALLS.record)
  local now_ms, now_sec = header.now_ms, header.now_sec
  local hour = tonumber(arg.hour_start)
  local idem = idempotency.idem_of(arg, '')
  local replay = idempotency.idem_begin(current_key, 'cur', idem, now_ms)
  if replay then return replay end
  if arg.apply == '0' then return redis.error_reply('TB_NOT_STORED no stored answer for this key') end
  local key, status, stored = stats.target_hash(current_key, previous_key, hour, now_sec)
  if key == nil then
    local dropped = reader.answer(CALLS.record, { status = 0, count = 0, sum = 0, sumsq = 0 })
    return idempotency.idem_finish(current_key, 'cur', idem, now_ms, dropped)
  end
  local v = tonumber(arg.value)
  local figures = stats.merge_into(key, hour, now_sec, 1, v, v * v, v, v, v, 0, NO_HISTOGRAM, stored)
  redis.call('HINCRBY', key, arg.histogram_field, 1)
  local reply = reader.answer(CALLS.record, { status = status, count = figures[1], sum = figures[2], sumsq = figures[3] })
  return idempotency.idem_finish(current_key, 'cur', idem, now_ms, reply)
end
