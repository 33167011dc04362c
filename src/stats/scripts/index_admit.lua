-- index_admit: lists a context/type pair in the stats index for an hour, admitting a pair that is new
-- (not recorded this or last hour) only within the global cap and the client's allowance. The index
-- is the one place that sees every pair, so the cap is counted there, atomically.
-- KEYS: 1
-- KEYS[1]        the stats index zset: "<context>\t<type>" -> latest hour recorded (unix s)
-- ARGV[1]        the oldest live hour (unix s): pairs listed at an older hour count as gone
-- ARGV[2]        the hour to list the pair at (unix s)
-- ARGV[3]        the pair's member
-- ARGV[4]        most live pairs (0: no cap)
-- ARGV[5]        new pairs the client may create (0 or 1; -1: no quota)
-- Reply: 1 when the pair was new (created), 0 when it was live already
-- Errors: TB_CAPACITY <live> <cap> 1, TB_QUOTA statsPairs 1 (nothing written)
local function index_admit(keys, args)
  local oldest = tonumber(args[1])
  local listed = redis.call('ZSCORE', keys[1], args[3])
  local created = 0
  if not listed or tonumber(listed) < oldest then
    local cap = tonumber(args[4])
    if cap > 0 then
      local live = redis.call('ZCOUNT', keys[1], oldest, '+inf')
      if live >= cap then return redis.error_reply('TB_CAPACITY ' .. live .. ' ' .. cap .. ' 1') end
    end
    if args[5] == '0' then return redis.error_reply('TB_QUOTA statsPairs 1') end
    created = 1
  end
  redis.call('ZADD', keys[1], 'GT', args[2], args[3])
  return created
end
