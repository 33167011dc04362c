-- requires: reader
-- index_admit: lists a context/type pair in the stats index for an hour, admitting a pair that is new
-- (not recorded this or last hour) only within the global cap and the client's allowance. The index
-- is the one place that sees every pair, so the cap is counted there, atomically.
-- Keys: index (the stats index zset: "<context>\t<type>" -> latest hour recorded, unix s)
-- Args (reader.read_call, CALLS.index_admit): the header (no version, time 0: it reads none, no
--   windows), then
--   oldest_hour  the oldest live hour (unix s): pairs listed at an older hour count as gone
--   hour_start   the hour to list the pair at (unix s)
--   member       the pair's member
--   cap          most live pairs (0: no cap)
--   new_pairs    new pairs the client may create (0 or 1; -1: no quota)
-- Reply (reader.answer, CALLS.index_admit): created (1 when the pair was new, 0 when it was live already)
-- Errors: TB_CAPACITY <live> <cap> 1, TB_QUOTA statsPairs 1 (nothing written)
local function index_admit(keys, args)
  local index_key = keys[1]
  local _, arg = reader.read_call(args, CALLS.index_admit)
  local oldest = tonumber(arg.oldest_hour)
  local listed = redis.call('ZSCORE', index_key, arg.member)
  local created = 0
  if not listed or tonumber(listed) < oldest then
    local cap = tonumber(arg.cap)
    if cap > 0 then
      local live = redis.call('ZCOUNT', index_key, oldest, '+inf')
      if live >= cap then return redis.error_reply('TB_CAPACITY ' .. live .. ' ' .. cap .. ' 1') end
    end
    if arg.new_pairs == '0' then return redis.error_reply('TB_QUOTA statsPairs 1') end
    created = 1
  end
  redis.call('ZADD', index_key, 'GT', arg.hour_start, arg.member)
  return reader.answer(CALLS.index_admit, { created = created })
end
