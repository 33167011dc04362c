-- counter_read: the live slices of one precision of a counter that overlap [from, to], and whether the
-- counter is known at all (listed in the index at any of the given precisions).
-- KEYS: 2
-- KEYS[1]        the bucket's known-counters index zset
-- KEYS[2]        the counter's count hash of the precision read
-- ARGV[1]        now, unix milliseconds
-- ARGV[2]        samples kept per precision (count)
-- ARGV[3]        the precision read, seconds
-- ARGV[4]        from, unix seconds: slices ending after it (t + prec > from)
-- ARGV[5]        to, unix seconds: slices starting at or before it (t <= to)
-- ARGV[6]        counter name
-- ARGV[7..]      every configured precision, seconds (for the "is it known" check)
-- Reply: { known (0|1), t_1, count_1, t_2, count_2, ... } slices unsorted
local function read(keys, args)
  local now_sec = math.floor(tonumber(args[1]) / 1000)
  local samples = tonumber(args[2])
  local prec = tonumber(args[3])
  local from, to = tonumber(args[4]), tonumber(args[5])
  local name = args[6]
  local known = 0
  for i = 7, #args do
    if redis.call('ZSCORE', keys[1], args[i] .. ':' .. name) then
      known = 1
      break
    end
  end
  local reply = { known }
  local cutoff = now_sec - samples * prec
  local entries = redis.call('HGETALL', keys[2])
  for i = 1, #entries, 2 do
    local t = tonumber(entries[i])
    if t and t > cutoff and t <= to and t + prec > from then
      reply[#reply + 1] = t
      reply[#reply + 1] = tonumber(entries[i + 1])
    end
  end
  return reply
end
