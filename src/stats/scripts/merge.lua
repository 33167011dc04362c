-- requires: reader, stats
-- merge: adds a batch aggregated in process (access times) to the hour it was recorded in, with the
-- same rollover as record.lua: one call per context per flush.
-- Keys: current (the current hour's hash {<prefix>stats:<escaped context>:<type>}:cur), previous (the
--   previous hour's hash, {...}:prev)
-- Args (reader.read_call, CALLS.merge): the header (no version, now: only for the keys' time to live,
--   no windows), then
--   hour_start                            hour start of the batch's samples, unix seconds
--   count, sum, sumsq, min, max, mean, m2  the batch's count (>= 1), sum, sum of squares, min, max,
--                                         mean and M2
--   histogram                             its histogram fields (z, p<i>, n<i>) and counts, each field
--                                         then its count, joined by commas ("" for none)
-- Reply (reader.answer, CALLS.merge): status (1 current, 2 previous, 0 dropped: too old), count, sum,
--   sumsq (strings) of that hour (0 each when dropped)
local function merge(keys, args)
  local current_key, previous_key = keys[1], keys[2]
  local header, arg = reader.read_call(args, CALLS.merge)
  local now_sec = header.now_sec
  local hour = tonumber(arg.hour_start)
  local key, status, stored = stats.target_hash(current_key, previous_key, hour, now_sec)
  if key == nil then return reader.answer(CALLS.merge, { status = 0, count = 0, sum = 0, sumsq = 0 }) end
  local histogram = {}
  for part in string.gmatch(arg.histogram, '[^,]+') do histogram[#histogram + 1] = part end
  local figures = stats.merge_into(key, hour, now_sec, tonumber(arg.count), tonumber(arg.sum), tonumber(arg.sumsq),
    tonumber(arg.min), tonumber(arg.max), tonumber(arg.mean), tonumber(arg.m2), histogram, stored)
  return reader.answer(CALLS.merge, { status = status, count = figures[1], sum = figures[2], sumsq = figures[3] })
end
