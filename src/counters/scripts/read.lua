-- requires: counters, reader
-- counter_read: the live slices of one precision of a counter that overlap [from, to], and whether the
-- counter is known at all (listed in the index at any of the configured precisions).
-- Keys: known (the bucket's known-counters index zset), count (the counter's count hash of the
--   precision read)
-- Args (reader.read_call, CALLS.read): the header (no version, now, no windows), then
--   samples        samples kept per precision (count)
--   precision_sec  the precision read, seconds
--   from_sec       from, unix seconds: slices ending after it (t + prec > from)
--   to_sec         to, unix seconds: slices starting at or before it (t <= to)
--   name           counter name
--   precisions     every configured precision (s), joined by commas (for the "is it known" check)
-- Reply (reader.answer, CALLS.read): known (0|1), slices { t_1, count_1, t_2, count_2, ... } unsorted
local function read(keys, args)
  local known_key, count_key = keys[1], keys[2]
  local header, arg = reader.read_call(args, CALLS.read)
  local samples, prec = tonumber(arg.samples), tonumber(arg.precision_sec)
  local from, to = tonumber(arg.from_sec), tonumber(arg.to_sec)
  local name = arg.name
  local known = 0
  local _, texts = counters.precisions_of(arg.precisions)
  for i = 1, #texts do
    if redis.call('ZSCORE', known_key, texts[i] .. ':' .. name) then
      known = 1
      break
    end
  end
  local slices = {}
  local cutoff = header.now_sec - samples * prec
  local entries = redis.call('HGETALL', count_key)
  for i = 1, #entries, 2 do
    local t = tonumber(entries[i])
    if t and t > cutoff and t <= to and t + prec > from then
      slices[#slices + 1] = t
      slices[#slices + 1] = tonumber(entries[i + 1])
    end
  end
  return reader.answer(CALLS.read, { known = known, slices = slices })
end
