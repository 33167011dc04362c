-- requires: stats
-- merge: adds a batch aggregated in process (access times) to the hour it was recorded in, with the
-- same rollover as record.lua: one call per context per flush.
-- KEYS: 2
-- KEYS[1]        the current hour's hash {<prefix>stats:<escaped context>:<type>}:cur
-- KEYS[2]        the previous hour's hash ({...}:prev)
-- ARGV[1]        now, unix milliseconds (only for the keys' time to live)
-- ARGV[2]        hour start of the batch's samples, unix seconds
-- ARGV[3]..ARGV[9]: the batch's count (>= 1), sum, sum of squares, min, max, mean and M2
-- ARGV[10], ARGV[11], ...: histogram field (z, p<i>, n<i>) and count pairs
-- Reply: { status (1 current, 2 previous, 0 dropped: too old), count, sum, sumsq (strings) of that hour }
local function merge(keys, args)
  local now_sec = math.floor(tonumber(args[1]) / 1000)
  local hour = tonumber(args[2])
  local key, status = stats.target_hash(keys[1], keys[2], hour, now_sec)
  if key == nil then return { 0 } end
  local figures = stats.merge_into(key, hour, now_sec, tonumber(args[3]), tonumber(args[4]), tonumber(args[5]), tonumber(args[6]), tonumber(args[7]), tonumber(args[8]), tonumber(args[9]), args, 10)
  return { status, figures[1], figures[2], figures[3] }
end
