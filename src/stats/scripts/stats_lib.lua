-- module: stats
-- stats_lib: shared by record.lua and merge.lua (a module of tb_stats). One hash per hour holds count, sum, sumsq, min, max,
-- the running mean and M2 (for a stable variance), and the log-bucket histogram fields
-- (z, p<i>, n<i>). The previous hour's hash is kept beside the current one until the next rollover.
local HOUR = 3600
-- Seconds a hash outlives its hour: it stays readable while it is the current or the previous hour.
local KEEP = 2 * HOUR + 60

-- Picks the hash for samples of `hour` (unix s), rolling current -> previous first when the hour has
-- moved on. Returns the key and 1 (current) or 2 (previous), or nil and 0 when the samples are older
-- than the hour before the stored current one (or than the caller's own previous hour): dropped.
-- Third, when the key is the current hash as it was read: its moments (merge_into's `stored`).
local function target_hash(cur, prev, hour, now_sec)
  -- The caller's previous hour: math.floor(now_sec / HOUR) * HOUR - HOUR without a call (Lua's % floors).
  if hour < now_sec - now_sec % HOUR - HOUR then return nil, 0 end
  -- The fields merge_into reads, then the hour: one HMGET of the current hash serves both.
  local fields = redis.call('HMGET', cur, 'count', 'sum', 'sumsq', 'min', 'max', 'mean', 'm2', 'hour')
  local stored = tonumber(fields[8])
  if stored == nil then
    local prev_hour = tonumber(redis.call('HGET', prev, 'hour'))
    if prev_hour ~= nil and prev_hour ~= hour - HOUR then redis.call('DEL', prev) end
    return cur, 1, fields
  end
  if stored == hour then return cur, 1, fields end
  if stored < hour then
    if stored == hour - HOUR then
      redis.call('RENAME', cur, prev)
    else
      redis.call('DEL', cur, prev)
    end
    return cur, 1
  end
  -- stored > hour: another recorder already started a later hour; never roll back.
  if stored - HOUR == hour then return prev, 2 end
  return nil, 0
end

-- Adds a batch (count n_b >= 1, its sum, sum of squares, min, max, mean and M2) and its
-- `histogram` (a flat list: field, count, field, count, ...) to the hash `key` of `hour`; moments combine
-- by Chan et al.'s formula. `stored`: the hash's moments as target_hash read them (nil: read here).
local function merge_into(key, hour, now_sec, n_b, sum_b, sumsq_b, min_b, max_b, mean_b, m2_b, histogram, stored)
  local s = stored or redis.call('HMGET', key, 'count', 'sum', 'sumsq', 'min', 'max', 'mean', 'm2')
  local n_a = tonumber(s[1]) or 0
  if n_a == 0 then
    redis.call('HSET', key, 'hour', hour, 'count', n_b, 'sum', sum_b, 'sumsq', sumsq_b, 'min', min_b, 'max', max_b, 'mean', mean_b, 'm2', m2_b)
  else
    local mean_a, m2_a = tonumber(s[6]), tonumber(s[7])
    local n = n_a + n_b
    local delta = mean_b - mean_a
    redis.call('HSET', key,
      'count', n,
      'sum', tonumber(s[2]) + sum_b,
      'sumsq', tonumber(s[3]) + sumsq_b,
      'min', math.min(tonumber(s[4]), min_b),
      'max', math.max(tonumber(s[5]), max_b),
      'mean', mean_a + delta * n_b / n,
      'm2', m2_a + m2_b + delta * delta * n_a * n_b / n)
  end
  for i = 1, #histogram, 2 do
    redis.call('HINCRBY', key, histogram[i], histogram[i + 1])
  end
  local ttl = hour + KEEP - now_sec
  if ttl < 60 then ttl = 60 end
  redis.call('EXPIRE', key, ttl)
  return redis.call('HMGET', key, 'count', 'sum', 'sumsq')
end

stats.target_hash = target_hash
stats.merge_into = merge_into
